"""`rc1 calibrate` on a finished run: the report of the step-0 evaluation's replies in reports/, read-only (no event,
no weights edited); and, before training has evaluated step 0, exit 3 naming `rc1 advance`."""

import json

import pytest
from conftest import events, rc1_here

from rc1.scoring.weights import read_weights

pytestmark = pytest.mark.e2e


def test_calibrate_reports_each_component_against_the_step_0_evaluations_success(finished_copy):
    log = finished_copy / "events/local.jsonl"
    before = log.read_bytes()
    weights_path = finished_copy / "configs/weights.json"  # the file configs/short.yaml names (reward.weights)
    weights_before = weights_path.read_bytes()

    result = rc1_here(finished_copy, "calibrate", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    written = list((finished_copy / "reports").glob("calibration_report_*.json"))  # the default run keeps reports/
    assert len(written) == 1 and json.loads(written[0].read_text()) == report
    assert f"wrote reports/{written[0].name}" in result.stderr

    step0 = next(e for e in events(finished_copy) if e["type"] == "eval_completed" and e["step"] == 0)
    shadow = set(json.loads((finished_copy / "data/local/shadow_manifest.json").read_text())["ids"])
    assert report["run"] == "local" and report["step"] == 0 and report["evaluation_seq"] == step0["seq"]
    assert {report["evaluation"]: report["evaluation_sha256"]} == step0["rollouts"]
    assert report["n_items"] == len(shadow) and report["n_replies"] == len(shadow) * (1 + step0["samples"])
    assert report["n_successes"] == sum(step0["item_greedy"]) + sum(step0["item_sampled"])  # the evaluation's success

    current = json.loads(weights_before)
    assert report["current_weights"] == current and [c["name"] for c in report["components"]] == list(current)
    for c in report["components"]:
        assert c["current_weight"] == current[c["name"]] and c["with_judge"] is None  # short.yaml has no judge
        s = c["with_success"]
        assert s["n_items"] == len(shadow) and s["n_replies"] == report["n_replies"]
        assert s["value"] is None or s["low"] is None or s["low"] <= s["value"] <= s["high"]
        assert (s["value"] is None) == (s["reason"] is not None)
    if report["suggested_weights"] is not None:
        suggested = finished_copy / "suggested.json"
        suggested.write_text(json.dumps(report["suggested_weights"]))
        assert read_weights(suggested, tuple(current))[1] == []  # the weights file's own rules

    held = report["held_out"]
    assert set(held["fit_items"]).isdisjoint(held["held_out_items"])
    assert set(held["fit_items"]) | set(held["held_out_items"]) == shadow
    assert held["current"]["n_items"] == len(held["held_out_items"])
    assert report["resampling"]["confidence"] == 0.95 and report["rules"] == {"min": 0.0, "max": 0.5, "sum": 1.0}

    assert log.read_bytes() == before and weights_path.read_bytes() == weights_before  # read-only, as it says

    text = rc1_here(finished_copy, "calibrate")
    assert text.returncode == 0, text.stderr
    header = next(line for line in text.stdout.splitlines() if line.startswith("component"))
    assert "with success" in header and "weight" in header and "suggested" in header
    assert all(any(line.startswith(name) for line in text.stdout.splitlines()) for name in current)
    assert "held out (" in text.stdout and "current weights" in text.stdout
    assert len(list((finished_copy / "reports").glob("calibration_report_*.json"))) == 2


def test_calibrate_before_training_exits_3_and_names_the_command_that_evaluates_step_0(finished_copy):
    log = finished_copy / "events/local.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    started = next(i for i, line in enumerate(lines) if b'"type":"training_started"' in line)
    log.write_bytes(b"".join(lines[:started]))  # the run as round 2 left it: passed, not trained
    for snapshot in (finished_copy / "events").glob("local.snapshot*"):
        snapshot.unlink()

    result = rc1_here(finished_copy, "calibrate")
    assert result.returncode == 3
    assert "no step-0 evaluation" in result.stderr and "`rc1 advance`" in result.stderr
    assert not list((finished_copy / "reports").glob("calibration_report_*.json"))
