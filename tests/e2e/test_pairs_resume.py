"""Every engine × strategy pair through the CLI: `rc1 advance --all` SIGKILLed at a named point (mid-step,
mid-append, mid-checkpoint: rc1/core/failpoints.py), then `rc1 advance --all` again, ends with the same per-step
metrics as an uninterrupted run, and the log audits clean.

trl×grpo, the default, is killed at timed points in test_kill_resume.py. The killed run is a process of its own that
dies by SIGKILL (`rc1_killed_at`: forked from this one, which has the training stack imported); the preflight rounds,
the uninterrupted run and the resume go through `rc1.cli.main.main` in this process, and both trainings start from
one gated workspace."""

from __future__ import annotations

import shutil
import signal

import pytest
import torch
from conftest import events, make_workspace, rc1_here, rc1_killed_at

from rc1.eventlog.log import read_log
from rc1.registry.strategies import pairs
from rc1.views.archive import archive_shards, read_shard

pytestmark = pytest.mark.e2e

COMPARED = ("loss", "kl", "ratio", "lr", "reward", "reward_std", "tokens", "epochs", "kl_coef")
STEPS = 6  # checkpoints at 2, 4, 6

# Where each pair's run dies, counted from the start of the killed process (rc1/core/failpoints.py).
KILL_AT = {
    ("torch", "grpo"): "step@3",  # step 3 computed, not logged: resume redoes it from step 2's checkpoint
    ("torch", "rloo"): "append:train_step@4",  # step 4's line written, nothing after it
    ("torch", "ppo"): "publish@2",  # step 4's checkpoint staged, not in place: resume from step 2
    ("torch", "dpo"): "checkpoint@1",  # step 2's checkpoint in place, no event: an orphan to move aside
    ("torch", "sft"): "append:checkpoint_saved@2",  # step 4's checkpoint logged, `latest` not yet moved
    ("trl", "rloo"): "publish@1",
    ("trl", "dpo"): "append:train_step@5",
    ("trl", "sft"): "step@2",
}


def test_every_pair_but_the_default_has_a_kill_point():
    assert set(KILL_AT) | {("trl", "grpo")} == set(pairs())


def pair_workspace(root, engine: str, strategy: str):
    train = {"train.max_steps": STEPS, "train.save_steps": 2, "train.eval_steps": STEPS}  # evaluated at 0 and 6
    if strategy in ("ppo", "dpo"):
        train["train.beta"] = 0.04  # PPO's per-token KL reward and DPO's β (the embedded default's GRPO has none)
    if strategy == "ppo":
        train["train.target_kl"] = 0.03  # PPO stops its passes at it; training_config requires one
    if engine == "torch" and strategy in ("grpo", "ppo"):
        train["train.update_epochs"] = 2
    if (engine, strategy) == ("trl", "dpo"):
        # TRL's OnlineDPOTrainer generates per micro-batch: two generations and two reward calls make one step
        train.update({"train.num_generations": 2, "train.gradient_accumulation_steps": 2})
    method = "lora" if engine == "torch" else "full"  # the torch engine trains adapters
    return make_workspace(
        root, **{"engine.name": engine, "engine.strategy": strategy, "finetune.method": method, **train}
    )


def step_metrics(root) -> dict[int, tuple]:
    """Per step, the metrics of the segment that last ran it (a resumed segment re-runs steps)."""
    return {e["step"]: tuple(float(e[k]) for k in COMPARED) for e in events(root) if e["type"] == "train_step"}


def advance_here(root, *until: str) -> int:
    result = rc1_here(root, "advance", *(until or ("--all",)))
    assert result.returncode == 0, result.stdout + result.stderr
    return result.returncode


@pytest.mark.parametrize("engine, strategy", sorted(KILL_AT))
def test_pair_killed_at_a_named_point_resumes_exactly(engine, strategy, tmp_path):
    whole = pair_workspace(tmp_path / "whole", engine, strategy)
    assert advance_here(whole, "--until", "R2_PASSED") == 0
    killed = tmp_path / "killed"
    shutil.copytree(whole, killed, symlinks=True)  # the same gated run, to be trained twice
    assert advance_here(whole) == 0
    expected = step_metrics(whole)
    assert sorted(expected) == list(range(1, STEPS + 1))
    assert all(values[COMPARED.index("ratio")] > 0 for values in expected.values())

    proc = rc1_killed_at(killed, KILL_AT[engine, strategy])
    assert proc.returncode == -signal.SIGKILL, f"the kill point was never reached ({proc.returncode}): {proc.stderr}"
    killed_at = max(step_metrics(killed), default=0)
    assert killed_at < STEPS

    assert advance_here(killed) == 0
    assert rc1_here(killed, "audit").returncode == 0
    # The last checkpoint trained again from the one before it: this pair's steps, weights and state bit for bit.
    retrained = rc1_here(killed, "audit", "--retrain", f"step_{STEPS}")
    assert retrained.returncode == 0 and "re-derived bit for bit" in retrained.stdout, retrained.stdout
    log = events(killed)
    assert log[-1]["type"] == "run_completed"
    resumed_from = [e for e in log if e["type"] == "training_started"][-1]["resume_from_step"]
    assert resumed_from <= killed_at
    got = step_metrics(killed)
    assert sorted(got) == sorted(expected)
    torch.testing.assert_close(
        torch.tensor([got[s] for s in sorted(got)], dtype=torch.float64),
        torch.tensor([expected[s] for s in sorted(expected)], dtype=torch.float64),
        rtol=0,
        atol=0,
    )
    if (engine, strategy) == ("trl", "dpo"):
        # every micro-batch's replies reach the archive under their step, and rescore as the trainer scored them
        rows = [
            row
            for shard in archive_shards(read_log(killed / "events/local.jsonl").events)
            if shard.kind == "train"
            for row in read_shard(killed, shard)
        ]
        assert sorted(row.step for row in rows) == [step for step in range(1, STEPS + 1) for _ in range(16 * 2)]
        rescored = rc1_here(killed, "audit", "--rescore")
        assert rescored.returncode == 0 and "audit passed" in rescored.stdout, rescored.stdout
