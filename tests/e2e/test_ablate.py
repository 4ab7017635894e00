"""`rc1 ablate`: an arm is a run of its own on the run's config with one component's weight moved to the others,
gated and trained like any run; a monitor's halt of the arm is part of its result (stopped, the reason recorded);
the report pairs the arm's selected checkpoint against the full reward's on the same gate items, and the run's own
log is left as it was."""

import json

from conftest import events, rc1_here


def test_an_arm_trains_as_a_run_of_its_own_and_is_paired_against_the_full_reward(finished_copy):
    before = (finished_copy / "events/local.jsonl").read_bytes()
    shown = rc1_here(finished_copy, "ablate", "--component", "format", "--json")
    assert shown.returncode == 0, shown.stderr
    report = json.loads(shown.stdout)
    (arm,) = report["arms"]
    assert arm["component"] == "format" and arm["run"] == "local-without-format" and arm["weights"]["format"] == 0
    paired = arm["against_full"]
    assert paired["n"] == report["n"] and paired["ci_low_pp"] <= paired["gain_pp"] <= paired["ci_high_pp"]
    arm_log = events(finished_copy, "local-without-format")
    assert arm_log[-1]["type"] == "run_completed"
    gates = {e["gate_sha256"] for e in arm_log + events(finished_copy) if e["type"] == "gate_set_evaluated"}
    assert gates == {report["gate_sha256"]}  # the same gate items on both sides
    halts = [e for e in arm_log if e["type"] == "monitor_tripped" and e["action"] == "halt"]
    stops = [e for e in arm_log if e["type"] == "halt_acknowledged" and "rc1 ablate" in e["reason"]]
    assert (arm["halted"] is not None) == bool(halts) == bool(stops)  # a halt is stopped, its reason in the arm's log
    kept = json.loads((finished_copy / "data/local-without-format/weights.json").read_text())
    assert kept == arm["weights"]
    assert (finished_copy / "events/local.jsonl").read_bytes() == before
    written = sorted((finished_copy / "reports").glob("ablation_*.json"))
    assert len(written) == 1 and json.loads(written[0].read_text()) == report

    again = rc1_here(finished_copy, "ablate", "--component", "format")  # resumed: the arm is not trained again
    assert again.returncode == 0 and "training" not in again.stdout + again.stderr
    assert events(finished_copy, "local-without-format") == arm_log
