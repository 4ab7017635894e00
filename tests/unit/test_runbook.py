"""Every check a preflight round can record and every monitor rule carries its runbook entry (what a failure usually
means, what to try), and the runbook of docs/monitors-and-runbook.md is `rc1 runbook --markdown`."""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import REPO, rc1_here

from rc1.app.runbook import CHECKS, RULES, markdown
from rc1.run.monitors.rules import MONITORS


def check_names() -> set[str]:
    """The `name` of every CheckResult the package builds (a literal, or a module constant it names)."""
    names = set()
    for path in (REPO / "rc1").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        constants = {
            t.id: node.value.value
            for node in ast.walk(tree)
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
            for t in node.targets
            if isinstance(t, ast.Name)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "CheckResult":
                for keyword in node.keywords:
                    if keyword.arg == "name" and isinstance(keyword.value, ast.Constant):
                        names.add(keyword.value.value)
                    elif keyword.arg == "name" and isinstance(keyword.value, ast.Name):
                        names.add(constants[keyword.value.id])
    return names


def test_every_check_a_round_can_record_has_a_runbook_entry():
    found = check_names()
    assert len(found) >= 25
    assert found <= set(CHECKS), f"give these a RUNBOOK entry beside them: {sorted(found - set(CHECKS))}"


def test_every_monitor_rule_has_a_runbook_entry_that_names_what_to_try():
    assert set(RULES) == set(MONITORS)
    for name, book in {**CHECKS, **RULES}.items():
        assert book.means and book.tries, name


def test_the_docs_runbook_is_the_runbooks_markdown():
    page = (REPO / "docs/monitors-and-runbook.md").read_text(encoding="utf-8")
    start, end = "<!-- runbook: rc1 runbook --markdown -->\n", "<!-- /runbook -->"
    block = page[page.index(start) + len(start) : page.index(end)]
    assert block == markdown(), "regenerate the runbook of docs/monitors-and-runbook.md: rc1 runbook --markdown"


def test_rc1_runbook_shows_one_entry_and_names_the_closest_for_a_typo(tmp_path: Path):
    shown = rc1_here(tmp_path, "runbook", "no_signal", config=None)
    assert shown.returncode == 0 and shown.stdout.startswith("no_signal:\n    usually: ")
    typo = rc1_here(tmp_path, "runbook", "no_signl", config=None)
    assert typo.returncode == 2 and "did you mean no_signal?" in typo.stderr
