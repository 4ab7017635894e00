"""`rc1 audit --retrain`: a checkpoint trained again from the one before it equals, bit for bit, what the log says
produced it; a fault every record agrees with (a skipped optimizer update) and a log edited with its chain rewritten
are both caught, by name, with exit 3; and nothing of the run is written."""

from __future__ import annotations

import hashlib
import json

import pytest
from conftest import events, make_workspace, rc1_here

from rc1.eventlog.lines import line_hash
from rc1.train.skipped_update import ENV as SKIP_UPDATE

pytestmark = pytest.mark.e2e


def tree(root) -> dict[str, str]:
    """Every file of a workspace but the model cache (a link the suite shares), with its sha256."""
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file() and not path.relative_to(root).parts[:2] == ("data", "models")
    }


def retrain(root, *args: str, env: dict | None = None) -> tuple[int, dict]:
    result = rc1_here(root, "audit", "--retrain", *args, "--json", env=env)
    assert result.returncode in (0, 3), result.stdout + result.stderr
    return result.returncode, json.loads(result.stdout)


def rewrite_line(root, index: int, change: dict) -> None:
    """Change event `index` of the log and rewrite the hash chain after it: a log that verifies, and lies."""
    path = root / "events/local.jsonl"
    lines = path.read_bytes().split(b"\n")[:-1]
    record = json.loads(lines[index])
    record.update(change)
    lines[index] = json.dumps(record, separators=(",", ":")).encode()
    for i in range(index + 1, len(lines)):
        record = json.loads(lines[i])
        record["prev"] = line_hash(lines[i - 1])
        lines[i] = json.dumps(record, separators=(",", ":")).encode()
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    (root / "events/local.snapshot.json").unlink(missing_ok=True)  # the snapshot anchors the old chain


def test_every_checkpoint_of_the_embedded_default_is_retrained_bit_for_bit_and_nothing_of_the_run_is_written(
    finished_copy,
):
    before = tree(finished_copy)
    code, report = retrain(finished_copy, "all", "--retrain-sample", "3")
    assert code == 0 and report["ok"], report
    done = {r["target"]: r for r in report["retrain"]}
    assert sorted(done) == [f"checkpoints/local/step_{s:05d}" for s in (4, 8, 12)]
    assert done["checkpoints/local/step_00004"]["start"] == "base"  # the first from the line's base
    assert done["checkpoints/local/step_00012"]["start"] == "checkpoints/local/step_00008"
    for r in done.values():
        assert r["verified"] and r["exact"] and r["differences"] == [], r
        assert len(r["steps"]) == 4 and r["train_seconds"] > 0 and r["recorded_sec_per_step"] > 0
        [compared] = r["checkpoints"]
        assert compared["differing"] == [] and {"model.safetensors", "optimizer.pt", "rng.pt"} <= set(compared["equal"])
        assert "rollouts.jsonl.zst" in compared["equal"]  # the step's completions, rewards and advantages too
    assert tree(finished_copy) == before
    assert not (finished_copy / ".rc1-retrain").exists()


def test_a_skipped_update_every_record_agrees_with_is_caught_by_the_retrain_alone(tmp_path):
    root = make_workspace(tmp_path, **{"train.max_steps": 8})  # checkpoints at 4 and 8
    assert rc1_here(root, "advance", "--all", env={SKIP_UPDATE: "6"}).returncode == 0  # step 6's weights kept as were
    assert rc1_here(root, "audit").returncode == 0
    rescored = rc1_here(root, "audit", "--rescore")
    assert rescored.returncode == 0 and "audit passed" in rescored.stdout, rescored.stdout

    code, report = retrain(root, "step_8")
    assert code == 3 and not report["retrain"][0]["verified"]
    messages = [f["message"] for f in report["findings"] if f["check"] == "retrain"]
    # Step 6's loss was computed before the update it skipped; step 7 is the first trained on other weights.
    assert any(
        m.startswith("step 7 retrained from checkpoints/local/step_00004 differs") and "loss" in m for m in messages
    )
    assert any(
        "checkpoints/local/step_00008 retrained from checkpoints/local/step_00004" in m
        and "model.safetensors: " in m
        and "the first model." in m
        for m in messages
    ), messages

    # Where the line did not record an exact resume, what differs is measured and said as notes, never passed or
    # failed (the edit itself is the anchor check's finding: the checkpoints saw the log's head before it).
    started = next(i for i, e in enumerate(events(root)) if e["type"] == "training_started")
    rewrite_line(root, started, {"exact_resume": False})
    result = rc1_here(root, "audit", "--retrain", "step_8")
    assert "NOT verified: the line did not record an exact resume" in result.stdout
    assert "note [retrain]" in result.stdout and "step 7 retrained" in result.stdout
    assert "FAIL [retrain]" not in result.stdout and "FAIL [anchor]" in result.stdout


def test_a_train_step_edited_with_its_chain_rewritten_is_caught_naming_the_step(finished_copy):
    log = events(finished_copy)
    ten = next(i for i, e in enumerate(log) if e["type"] == "train_step" and e["step"] == 10)
    rewrite_line(finished_copy, ten, {"loss": log[ten]["loss"] + 0.25})
    code, report = retrain(finished_copy, "step_12")
    assert code == 3
    [finding] = [f for f in report["findings"] if f["check"] == "retrain"]
    assert finding["seq"] == log[ten]["seq"]
    assert finding["message"].startswith(
        "step 10 retrained from checkpoints/local/step_00008 differs from its train_step in loss (loss: recorded"
    )
    assert report["retrain"][0]["checkpoints"][0]["differing"] == []  # the weights are what the steps made


def test_what_cannot_be_retrained_is_refused_by_name(finished_copy):
    unknown = rc1_here(finished_copy, "audit", "--retrain", "step_9")
    assert unknown.returncode == 2 and "--retrain step_9: no checkpoint" in unknown.stderr
    assert "checkpoints/local/step_00012" in unknown.stderr
    none = rc1_here(finished_copy, "audit", "--retrain", "all", "--retrain-sample", "0")
    assert none.returncode == 2 and "--retrain-sample 0: retrain at least one checkpoint" in none.stderr
    both = rc1_here(finished_copy, "audit", "--retrain", "all", "--from", "step_4")
    assert both.returncode == 2 and "--from: a retrain of `all`" in both.stderr
    later = rc1_here(finished_copy, "audit", "--retrain", "step_8", "--from", "step_12")
    assert later.returncode == 2 and "--from step_12: no checkpoint" in later.stderr
    (finished_copy / "checkpoints/local/step_00008/optimizer.pt").write_bytes(b"changed")
    changed = rc1_here(finished_copy, "audit", "--retrain", "step_12")
    assert changed.returncode == 3
    assert "checkpoints/local/step_00012 cannot be retrained from checkpoints/local/step_00008: " in changed.stdout
    assert "optimizer.pt: sha256 mismatch" in changed.stdout
