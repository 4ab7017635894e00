"""`rc1 ls`: the extension points' tables, listed from the tables the code runs on (shared DESIGN §8)."""

import json

import pytest
from conftest import REPO, rc1_here

from rc1.app.runbook import CHECKS
from rc1.registry.strategies import STRATEGIES
from rc1.registry.trackers import TRACKERS
from rc1.run.monitors.rules import MONITORS


@pytest.mark.parametrize(
    "table, names", [("checks", CHECKS), ("strategies", STRATEGIES), ("monitors", MONITORS), ("trackers", TRACKERS)]
)
def test_each_table_lists_every_entry_the_code_runs_on_and_needs_no_config(table, names, tmp_path):
    listed = rc1_here(tmp_path, "ls", table, "--json", config=None)
    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)
    assert [row["name"] for row in rows] == list(names)
    assert all(row["about"] for row in rows)
    text = rc1_here(tmp_path, "ls", table, config=None).stdout
    assert all(name in text for name in names)
    assert list(tmp_path.iterdir()) == []  # read only: nothing written where it ran


def test_what_a_monitor_row_says_follows_its_spec(tmp_path):
    rows = {row["name"]: row for row in json.loads(rc1_here(tmp_path, "ls", "monitors", "--json", config=None).stdout)}
    assert rows["non_finite"]["details"]["config"] == "always on (cannot be switched off)"
    assert rows["entropy_floor"]["details"]["config"] == "monitors.entropy_floor"
    assert rows["entropy_floor"]["details"]["signal"] == MONITORS["entropy_floor"].signal


def test_an_unknown_table_is_exit_2_naming_the_tables(tmp_path):
    refused = rc1_here(tmp_path, "ls", "rewards", config=None)
    assert refused.returncode == 2 and "checks, strategies, monitors, trackers" in refused.stderr.replace("'", "")


def test_the_docs_tables_are_rc1_ls_markdown(tmp_path):
    shown = rc1_here(tmp_path, "ls", "--markdown", config=None)
    assert shown.returncode == 0, shown.stderr
    assert (REPO / "docs/tables.md").read_text(encoding="utf-8") == shown.stdout, (
        "regenerate: bin/rc1 ls --markdown > docs/tables.md"
    )


def test_a_check_row_says_its_rounds_commands_and_production_floors(tmp_path):
    rows = {row["name"]: row for row in json.loads(rc1_here(tmp_path, "ls", "checks", "--json", config=None).stdout)}
    assert rows["duplicates"]["details"]["also"] == "rc1 pool validate"
    assert "preflight.max_duplicate_rate (production ≤ 0.02)" in rows["duplicates"]["details"]["limits"]
    assert rows["release_power"]["details"]["rounds"] == "2"


def test_ls_without_a_table_names_them_exit_2(tmp_path):
    refused = rc1_here(tmp_path, "ls", config=None)
    assert refused.returncode == 2 and "name a table" in refused.stderr
