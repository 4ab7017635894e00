"""The always-on frozen_base guard on a real run (rc1/run/monitors/rules/frozen_base.py): a LoRA line records its
frozen base's sampled hashes at its start and at every checkpoint, and halts, by name, the first time they move. The
move is planted through the test hook `RC1_TEST_MOVE_BASE_AT` (one unit in the last place of one sampled weight, what a
vLLM sync's in-place merge leaves); the suite's other LoRA runs are the healthy ones, and none of them trips (a full
fine-tune, the embedded default, freezes nothing and records nothing)."""

from __future__ import annotations

import json
import os

import pytest
from conftest import events, make_workspace, rc1_forked, rc1_here

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def moved_run(tmp_path_factory):
    root = make_workspace(tmp_path_factory.mktemp("moved"), **{"train.max_steps": 8, "finetune.method": "lora"})
    result = rc1_forked(root, "advance", "--all", env={**os.environ, "RC1_TEST_MOVE_BASE_AT": "4"})
    return root, result


def test_a_base_that_moves_halts_the_line_at_that_checkpoint_naming_the_tensor(moved_run):
    root, result = moved_run
    assert result.returncode == 3, result.stdout + result.stderr
    assert "HALTED by frozen_base at step 4" in result.stderr and "Traceback" not in result.stderr
    log = events(root)
    started = next(e for e in log if e["type"] == "training_started")
    saved = [e for e in log if e["type"] == "checkpoint_saved"]
    assert len(started["frozen_sha256"]) == 8  # the sampled frozen tensors, by name
    assert [e["step"] for e in saved] == [4]  # nothing trained past the halt
    moved = [name for name, digest in saved[0]["frozen_sha256"].items() if started["frozen_sha256"][name] != digest]
    assert len(moved) == 1
    (trip,) = [e for e in log if e["type"] == "monitor_tripped"]
    assert (trip["rule"], trip["step"], trip["action"], trip["measured"]) == (
        "frozen_base",
        4,
        "halt",
        {"moved_tensors": 1.0},
    )
    assert moved[0] in trip["detail"] and "at step 4's checkpoint" in trip["detail"]
    status = json.loads(rc1_here(root, "status", "--json").stdout)
    assert status["state"] == "HALTED" and status["halt"]["rule"] == "frozen_base"
    assert rc1_here(root, "audit").returncode == 0  # the trip is derived again from the two records


def test_the_guard_is_listed_as_always_on_with_its_runbook(moved_run):
    root, _ = moved_run
    listed = rc1_here(root, "ls", "monitors", config=None)
    assert listed.returncode == 0 and "frozen_base" in listed.stdout, listed.stdout + listed.stderr
