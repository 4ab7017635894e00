"""A run killed with SIGKILL mid-training resumes from its newest logged checkpoint, exactly."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import msgspec
import pytest
import torch
from conftest import PATIENCE, events, make_workspace, rc1_here

from rc1.eventlog.log import read_log
from rc1.views.archive import archive_shards, read_shard

pytestmark = pytest.mark.e2e

COMPARED = ("loss", "kl", "ratio", "lr", "reward", "reward_std", "tokens")


def final_metrics(root) -> dict[int, tuple]:
    """Per step, the metrics of the segment that last ran it (a resumed segment re-runs steps)."""
    return {e["step"]: tuple(float(e[k]) for k in COMPARED) for e in events(root) if e["type"] == "train_step"}


def wait_for(predicate, proc, timeout=PATIENCE):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        if proc.poll() is not None:
            raise AssertionError(f"rc1 exited early with {proc.returncode}: {proc.stderr.read()}")
        time.sleep(0.05)
    raise AssertionError("timed out waiting for training progress")


# Killed past the first checkpoint (steps 4, 8, …): resumed from it. A trl×grpo run that dies before any checkpoint
# and is finished fresh with the same steps is tests/e2e/test_disk_full.py's case; trl×sft is killed there by name
# (tests/e2e/test_pairs_resume.py).
@pytest.mark.parametrize("kill_after_step, may_resume_from", [(6, (4, 8))])
def test_sigkill_during_training_then_advance_completes_with_identical_metrics(
    completed_run, tmp_path, kill_after_step, may_resume_from
):
    root = make_workspace(tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "rc1", "advance", "--all", "--config", "configs/short.yaml"],
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        # Checkpoints come every 4 steps: step 6 is past the first one.
        wait_for(lambda: any(e["type"] == "train_step" and e["step"] >= kill_after_step for e in events(root)), proc)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    killed_at = max(e["step"] for e in events(root) if e["type"] == "train_step")
    assert killed_at < 12

    # After the kill, rc1 runs in this process: the point here is the killed process, not the new ones.
    status = rc1_here(root, "status", "--json")
    assert '"state": "TRAINING"' in status.stdout or '"state": "CHECKPOINTED"' in status.stdout

    result = rc1_here(root, "advance", "--all")
    assert result.returncode == 0, result.stdout + result.stderr

    log = events(root)
    starts = [e for e in log if e["type"] == "training_started"]
    assert len(starts) == 2
    resumed_from = starts[1]["resume_from_step"]
    assert resumed_from in may_resume_from and resumed_from <= killed_at
    second_segment = [e["step"] for e in log[log.index(starts[1]) :] if e["type"] == "train_step"]
    assert second_segment == list(range(resumed_from + 1, 13))
    assert log[-1]["type"] == "run_completed"

    audit = rc1_here(root, "audit")
    assert audit.returncode == 0, audit.stdout

    expected = final_metrics(completed_run)
    got = final_metrics(root)
    assert sorted(got) == sorted(expected) == list(range(1, 13))
    torch.testing.assert_close(
        torch.tensor([got[s] for s in range(1, 13)], dtype=torch.float64),
        torch.tensor([expected[s] for s in range(1, 13)], dtype=torch.float64),
    )

    # The rollout archive too: the killed run's is the uninterrupted run's, completion by completion (what a
    # killed segment sampled after its last checkpoint was never vouched for, and the resumed one sampled it again).
    assert archived_rows(root) == archived_rows(completed_run)


def archived_rows(root) -> list[dict]:
    """Every archived completion the run's log vouches for, in archive order."""
    shards = archive_shards(read_log(root / "events/local.jsonl").events)
    assert {s.kind for s in shards} == {"train", "eval"} and len([s for s in shards if s.kind == "train"]) == 3
    return [msgspec.to_builtins(row) for shard in shards for row in read_shard(root, shard)]
