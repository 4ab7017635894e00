"""The torch engine through the CLI: SIGKILLed at a random point (mid-step, mid-checkpoint, mid-append),
`rc1 advance` finishes with the same per-step metrics as an uninterrupted run.

Every pair's own state (adapter, optimizer, scheduler, RNGs, sampler, strategy) is checked to resume bit
for bit in tests/test_train_engine.py; trl×grpo is killed through the CLI in test_kill_resume.py. Here the
torch engine's staging and publishing meet real kills on PPO (the most state: a value head) and DPO
(rollouts regrouped into pairs); grpo and sft share that code path, and each CLI pair costs ~45 s of the
suite's 10 minutes (two runs and a resume, each importing the training stack)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time

import pytest
import torch

from conftest import events, make_workspace, rc1

pytestmark = pytest.mark.e2e

COMPARED = ("loss", "kl", "ratio", "lr", "reward", "reward_std", "tokens", "epochs", "kl_coef")
STEPS = 6


def pair_workspace(root, strategy: str):
    rl = {"train.update_epochs": 2} if strategy in ("grpo", "ppo") else {"train.target_kl": None}
    return make_workspace(root, **{"engine.name": "torch", "engine.strategy": strategy, "train.max_steps": STEPS,
                                   "train.save_steps": 2, "train.eval_steps": 2, **rl})


def step_metrics(root) -> dict[int, tuple]:
    return {e["step"]: tuple(float(e[k]) for k in COMPARED) for e in events(root) if e["type"] == "train_step"}


@pytest.mark.parametrize("strategy", ["ppo", "dpo"])
def test_torch_pair_killed_at_a_random_point_resumes_exactly(strategy, tmp_path):
    whole = pair_workspace(tmp_path / "whole", strategy)
    result = rc1(whole, "advance", "--all")
    assert result.returncode == 0, result.stdout + result.stderr
    expected = step_metrics(whole)
    assert sorted(expected) == list(range(1, STEPS + 1))
    assert any(values[COMPARED.index("ratio")] not in (0.0, 1.0) for values in expected.values())

    rng = random.Random(f"kill-{strategy}")
    kill_step, extra_delay = rng.randint(1, STEPS - 1), rng.uniform(0.0, 0.4)
    root = pair_workspace(tmp_path / "killed", strategy)
    proc = subprocess.Popen([sys.executable, "-m", "rc1", "advance", "--all", "--config", "configs/short.yaml"],
                            cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while not any(e["type"] == "train_step" and e["step"] >= kill_step for e in events(root)):
            assert proc.poll() is None, f"rc1 exited early with {proc.returncode}: {proc.stderr.read()}"
            assert time.monotonic() < deadline, "timed out waiting for training progress"
            time.sleep(0.02)
        time.sleep(extra_delay)  # somewhere in the next step, its checkpoint, or an append
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()

    resumed = rc1(root, "advance", "--all")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert rc1(root, "audit").returncode == 0
    got = step_metrics(root)
    assert sorted(got) == sorted(expected)
    torch.testing.assert_close(torch.tensor([got[s] for s in sorted(got)], dtype=torch.float64),
                               torch.tensor([expected[s] for s in sorted(expected)], dtype=torch.float64), rtol=0, atol=0)
