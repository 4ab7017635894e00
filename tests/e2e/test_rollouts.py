"""Every rollout kept, every reward re-derivable: the archive of a finished run, `rc1 rollouts`, and
`rc1 audit --rescore` catching an edited reward and a weight changed after the run."""

import json

import pytest
import zstandard
from conftest import SHORT, events, rc1_here

from rc1.scoring.archive import SHARD_NAME

pytestmark = pytest.mark.e2e

SAMPLES = SHORT["release.samples"]  # sampled replies per item beside the greedy one


def test_every_sampled_completion_is_archived_with_its_components_and_vouched_for(finished_copy):
    log = events(finished_copy)
    saved = [e for e in log if e["type"] == "checkpoint_saved"]
    assert saved and all(SHARD_NAME in e["files"] for e in saved)
    evals = [e for e in log if e["type"] == "eval_completed"]
    assert [e["step"] for e in evals] == [0, 4, 8, 12] and all(len(e["rollouts"]) == 1 for e in evals)

    rows = json.loads(rc1_here(finished_copy, "rollouts", "--json").stdout)
    steps = [e for e in log if e["type"] == "train_step"]
    assert {r["step"] for r in rows} == {s["step"] for s in steps} and all(r["kind"] == "train" for r in rows)
    per_step = len(rows) // len(steps)
    assert per_step == 16  # 4 prompts × 4 replies (tests/conftest.py SHORT)
    for step in steps:  # the step's means, in its event, are its archived completions'
        mine = [r for r in rows if r["step"] == step["step"]]
        assert step["components"]["format"] == pytest.approx(sum(r["components"]["format"] for r in mine) / per_step)
        assert step["reward"] == pytest.approx(sum(r["reward"] for r in mine) / per_step, abs=1e-6)
    assert {"step", "item_id", "task", "completion", "components", "reward"} <= set(rows[0])
    assert all(r["advantage"] is not None for r in rows)  # GRPO's own, as TRL computed it (rescored below)

    worst = rc1_here(finished_copy, "rollouts", "--worst", "5")
    lines = worst.stdout.splitlines()
    assert worst.returncode == 0 and len(lines) == 6 and " correctness " in lines[0]  # whole names, never cut
    rewards = [float(line.split()[4]) for line in lines[1:]]
    assert rewards == sorted(rewards) and rewards[0] == min(r["reward"] for r in rows)
    evaluated = json.loads(rc1_here(finished_copy, "rollouts", "--eval", "12", "--json").stdout)
    shadow = len(json.loads((finished_copy / "data/local/shadow_manifest.json").read_text())["ids"])
    assert {r["kind"] for r in evaluated} == {"eval", "eval_sampled"} and len(evaluated) == shadow * (1 + SAMPLES)

    audit = rc1_here(finished_copy, "audit", "--rescore", "--json")
    report = json.loads(audit.stdout)
    assert audit.returncode == 0 and report["ok"], audit.stdout
    assert report["rescore"]["rescored"] == report["rescore"]["completions"] == len(rows) + 4 * shadow * (1 + SAMPLES)
    assert report["rescore"]["steps"] == len(steps) and report["rescore"]["verdicts"] == 1


def test_an_edited_archived_reward_is_a_finding_naming_step_item_and_component(finished_copy):
    shard = finished_copy / "checkpoints/local/step_00008" / SHARD_NAME
    lines = zstandard.ZstdDecompressor().decompress(shard.read_bytes()).decode().splitlines()
    row = json.loads(lines[3])
    row["reward"] += 0.5
    lines[3] = json.dumps(row)
    shard.write_bytes(zstandard.ZstdCompressor().compress(("\n".join(lines) + "\n").encode()))

    audit = rc1_here(finished_copy, "audit", "--rescore")
    assert audit.returncode == 3
    assert f"train step {row['step']} item {row['item_id']}: reward recorded {row['reward']}" in audit.stdout
    assert f"train step {row['step']}: the trainer's reward" in audit.stdout  # the step's mean no longer adds up
    assert f"checkpoints/local/step_00008/{SHARD_NAME}: sha256 differs" in audit.stdout


def test_a_weight_changed_after_the_run_is_found_by_rescoring(finished_copy):
    path = finished_copy / "data/local/weights.json"  # the run's own copy, kept by round 1
    weights = json.loads(path.read_text())
    weights["format"], weights["length"] = weights["length"], weights["format"]
    assert weights != json.loads(path.read_text())
    path.write_text(json.dumps(weights))

    audit = rc1_here(finished_copy, "audit", "--rescore")
    assert audit.returncode == 3
    assert "reward recorded" in audit.stdout and "[gate_inputs]" in audit.stdout and "weights changed" in audit.stdout
