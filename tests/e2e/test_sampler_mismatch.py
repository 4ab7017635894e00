"""The sampler_mismatch rule on real runs where transformers samples (rc1/train/sampler_gap.py): every step records
the gap between the log-probabilities `generate` drew each token with and the trainer's of the same token. A healthy
line's gap is numerical (the suite's shared run, read here). The planted fault is the test hook
`RC1_TEST_STALE_ROLLOUTS`: the line samples every step with its step-0 weights, a rollout engine never synced; the
gap grows as the policy moves and the rule halts the line by name, at the step its window says."""

from __future__ import annotations

import json
import os

import pytest
from conftest import events, make_workspace, rc1_forked, rc1_here

pytestmark = pytest.mark.e2e

RULE = {"max_mean": 0.05, "window": 3, "action": "halt"}


def gaps(root) -> list[float]:
    return [e["diagnostics"]["sampling_logp_difference"] for e in events(root) if e["type"] == "train_step"]


@pytest.fixture(scope="module")
def stale_run(tmp_path_factory):
    root = make_workspace(
        tmp_path_factory.mktemp("stale"),
        **{"train.max_steps": 8, "monitors.sampler_mismatch": RULE},
    )
    result = rc1_forked(root, "advance", "--all", env={**os.environ, "RC1_TEST_STALE_ROLLOUTS": "1000"})
    return root, result


def test_a_healthy_line_records_a_numerical_gap_at_every_step(completed_run):
    healthy = gaps(completed_run)
    assert len(healthy) == 12 and max(healthy) < 1e-4, healthy


def test_a_stale_rollout_model_halts_the_line_by_name_where_its_window_passes_the_threshold(stale_run):
    root, result = stale_run
    assert result.returncode == 3, result.stdout + result.stderr
    stale = gaps(root)
    assert stale[0] < 1e-4  # step 1 samples with the step-0 weights, which are still the trained ones
    windows = [sum(stale[i - 3 : i]) / 3 for i in range(3, len(stale) + 1)]
    first = next(i for i, mean in enumerate(windows, start=3) if mean > RULE["max_mean"])
    assert f"HALTED by sampler_mismatch at step {first}" in result.stderr and "Traceback" not in result.stderr
    (trip,) = [e for e in events(root) if e["type"] == "monitor_tripped"]
    assert (trip["rule"], trip["step"], trip["action"]) == ("sampler_mismatch", first, "halt")
    assert trip["measured"]["logp_difference"] == pytest.approx(windows[first - 3])
    status = json.loads(rc1_here(root, "status", "--json").stdout)
    assert status["state"] == "HALTED" and status["halt"]["rule"] == "sampler_mismatch"
    assert rc1_here(root, "audit").returncode == 0  # the trip is derived again from the recorded steps
