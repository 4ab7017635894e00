"""A training failure: FATAL on stderr, exit 1, reports/ERROR_<ts>.json, reports/FAIL_<ts>.tar.gz, training_failed in
the log. A diverging run is not a failure but a halt: the non-finite guard stops it before the damage is applied or
published (exit 3, state HALTED)."""

import json
import tarfile

import pytest
from conftest import events, make_workspace, rc1, rc1_forked, rc1_here

pytestmark = pytest.mark.e2e

# A reward function that scores like brevity, and raises during training when BOOM is set (read at call time: the
# source is fingerprinted, the environment is not). Round 1's probe calls it without BOOM.
BOOM = """import os


def boom(prompts, completions, completion_tokens, **columns):
    if os.environ.get("BOOM"):
        raise RuntimeError("boom: the reward service is down")
    return [1.0 if tokens <= 8 else 8 / tokens for tokens in completion_tokens]
"""
WEIGHTS = {"correctness": 0.4, "f1": 0.15, "format": 0.2, "length": 0.15, "boom": 0.1}


def test_a_failing_run_fails_loudly_and_leaves_a_report(tmp_path):
    root = make_workspace(
        tmp_path,
        **{
            "reward.weights": "weights_boom.json",
            "reward.functions": [{"name": "boom", "path": "boom:boom", "weight": 0.1}],
        },
    )
    (root / "configs/boom.py").write_text(BOOM)
    (root / "configs/weights_boom.json").write_text(json.dumps(WEIGHTS))
    assert rc1_here(root, "advance", "--until", "R2_PASSED").returncode == 0
    result = rc1_forked(root, "advance", "--all", env={"BOOM": "1"})
    assert result.returncode == 1, result.stdout + result.stderr
    assert "FATAL: training failed at step" in result.stderr and "Traceback" not in result.stderr
    last = events(root)[-1]
    assert last["type"] == "training_failed" and "boom: the reward service is down" in last["error"]
    report = json.loads((root / last["report"]).read_text())
    assert report["trace"] and report["log_tail"] and "boom" in report["error"]
    # The FATAL wrote the failpack by itself, and says where: the report, the log and the run's logs are in it.
    (pack,) = root.glob("reports/FAIL_*.tar.gz")
    assert f"everything packed in {pack.relative_to(root)}" in result.stderr
    with tarfile.open(pack) as tar:
        names = set(tar.getnames())
    assert {last["report"], "events/local.jsonl", "logs/train.log", "configs/short.yaml"} <= names
    assert not any(name.endswith(".lock") for name in names)
    status = json.loads(rc1(root, "status", "--json").stdout)
    assert status["state"] == "TRAINING" and "training failed" in status["last_error"]
    assert rc1(root, "audit").returncode == 0


def test_a_diverging_run_halts_before_the_damage_is_applied_or_published(tmp_path):
    root = make_workspace(tmp_path, **{"train.learning_rate": 1.0e30})
    result = rc1_forked(root, "advance", "--all")
    assert result.returncode == 3, result.stdout + result.stderr
    assert "HALTED by non_finite at step" in result.stderr and "Traceback" not in result.stderr
    log = events(root)
    trip = next(e for e in log if e["type"] == "monitor_tripped")
    assert trip["rule"] == "non_finite" and trip["action"] == "halt"
    assert set(trip["not_finite"].values()) <= {"nan", "inf", "-inf"} and trip["not_finite"]
    assert trip["step"] == max(e["step"] for e in log if e["type"] == "train_step") + 1  # the step not applied
    # What was published holds no value that is not finite: the non-finite gradient was never applied.
    import torch
    from safetensors.torch import load_file

    for saved in (e for e in log if e["type"] == "checkpoint_saved"):
        assert saved["step"] < trip["step"]
        weights = load_file(root / saved["dir"] / "model.safetensors")
        assert all(torch.isfinite(t).all() for t in weights.values() if t.is_floating_point())
    assert not list(root.glob("reports/ERROR_*.json"))  # a halt is no failure
    status = json.loads(rc1_here(root, "status", "--json").stdout)
    assert status["state"] == "HALTED" and status["halt"]["rule"] == "non_finite"
    gone_past = rc1_here(root, "advance", "--because", "try again")
    assert gone_past.returncode == 3 and "roll back with an amended key" in gone_past.stderr
    assert rc1_here(root, "audit").returncode == 0
