"""The preflight checks are one table (rc1/app/checks.py): every entry's limits are config keys, the production
floors are the entries' own, and the rounds run the table's entries in its order under their names."""

from __future__ import annotations

import msgspec
import pytest
from conftest import REPO

from rc1.app.checks import CHECKS, PRODUCTION_FLOORS, run_checks
from rc1.checks.result import CheckResult
from rc1.checks.spec import Check, RoundInputs
from rc1.config.loading import load_config
from rc1.config.schema import Config
from rc1.core.runbook import Runbook
from rc1.core.workspace import Workspace


def _has_key(config: Config, dotted: str) -> bool:
    node = config
    for part in dotted.split("."):
        if not isinstance(node, msgspec.Struct) or part not in node.__struct_fields__:
            return False
        node = getattr(node, part)
    return True


def test_every_limit_a_check_names_is_a_config_key():
    config = load_config(REPO / "configs/local.yaml").config
    named = {key for check in CHECKS for key in check.thresholds}
    assert {key for key in named if not _has_key(config, key)} == set(), "name config keys (rc1 config explain KEY)"
    assert {"preflight.min_distinct2", "release.gate_size", "data.shadow_size"} <= named
    assert not _has_key(config, "preflight.no_such_key")


def test_names_are_unique_and_every_entry_runs_in_a_round_or_stands_in_for_one():
    names = [check.name for check in CHECKS]
    assert len(names) == len(set(names))
    assert all(set(check.rounds) <= {1, 2} for check in CHECKS)


def test_the_production_floors_are_the_entries_own_and_never_disagree():
    floors = [(key, floor) for check in CHECKS for key, floor in check.thresholds.items() if floor is not None]
    assert dict(floors) == PRODUCTION_FLOORS
    assert len({key for key, _ in floors}) == len(floors), "one entry gives a threshold key's floor"


def _inputs() -> RoundInputs:
    loaded = load_config(REPO / "configs/local.yaml")
    return RoundInputs(loaded=loaded, ws=Workspace(root=REPO, run="local"), round_no=1)


def _entry(name: str, recorded: str) -> Check:
    return Check(
        name=name,
        rounds=(1,),
        run=lambda r: CheckResult(name=recorded, passed=True, measured={}, thresholds={}),
        runbook=Runbook(means="m", tries=("t",)),
    )


def test_a_check_recording_under_another_name_than_its_entry_is_an_error():
    table = (_entry("mine", "mine"), _entry("other", "renamed"))
    with pytest.raises(AssertionError, match="'other' recorded its result as 'renamed'"):
        run_checks(_inputs(), round_no=1, table=table)
    assert [r.name for r in run_checks(_inputs(), round_no=1, table=table[:1])] == ["mine"]
    assert run_checks(_inputs(), round_no=2, table=table[:1]) == []
