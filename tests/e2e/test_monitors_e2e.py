"""Monitors on the real tiny model, through the CLI: a rule halts the run (exit 3, state HALTED), a halted run refuses
to train until a person chooses the way forward (go on, roll back with an amended learning rate, stop the line), a
`stop` rule ends the line early with its verdict, a kill around a trip trips at the same step, and audit derives
every trip again from the log."""

from __future__ import annotations

import json
import signal

import pytest
from conftest import events, make_workspace, rc1_forked, rc1_here, rc1_killed_at

from rc1.eventlog.lines import line_hash

pytestmark = pytest.mark.e2e

# Entropy is always far below 100 nats: the rule trips as soon as its window is full, at step 10 (checkpoints at 4, 8).
ALWAYS_LOW_ENTROPY = {
    "monitors.entropy_floor": {"min_entropy": 100.0, "max_rise": None, "window": 10, "action": "halt"},
}


def trips(root) -> list[tuple[str, int, str]]:
    return [(e["rule"], e["step"], e["action"]) for e in events(root) if e["type"] == "monitor_tripped"]


def log_bytes(root) -> bytes:
    return (root / "events/local.jsonl").read_bytes()


@pytest.fixture(scope="module")
def halted_run(tmp_path_factory):
    root = make_workspace(tmp_path_factory.mktemp("halted"), **ALWAYS_LOW_ENTROPY)
    result = rc1_forked(root, "advance", "--all")
    return root, result


def test_a_halting_rule_stops_the_run_at_its_step_and_says_how_to_go_on(halted_run):
    root, result = halted_run
    assert result.returncode == 3, result.stdout + result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("error: run local is HALTED by entropy_floor at step 10")
    assert "rc1 advance --because TEXT" in last and "--from best|latest|step_N" in last and "--stop" in last
    assert "usually: a collapse" in result.stderr  # the rule's runbook, printed before the line
    assert "Traceback" not in result.stderr
    assert trips(root) == [("entropy_floor", 10, "halt")]
    log = events(root)
    assert [e["step"] for e in log if e["type"] == "train_step"] == list(range(1, 11))
    assert [e["step"] for e in log if e["type"] == "checkpoint_saved"] == [4, 8]  # nothing published past the halt
    status = json.loads(rc1_here(root, "status", "--json").stdout)
    assert status["state"] == "HALTED" and status["allowed"] == ["gate_invalidated", "halt_acknowledged"]
    assert {k: status["halt"][k] for k in ("rule", "step", "seed")} == {
        "rule": "entropy_floor",
        "step": 10,
        "seed": 1234,
    }
    assert status["halt"]["measured"]["entropy"] < 100 and status["halt"]["threshold"] == {"min_entropy": 100.0}
    watch = status["monitors"]["entropy_floor"]
    assert watch["tripped"] and watch["threshold"] == 100.0 and watch["action"] == "halt" and watch["breach"]
    text = rc1_here(root, "status").stdout
    assert "  entropy_floor      BREACHES  halt  1 trip(s)" in text and "allowed    a way on from the halt" in text
    assert set(status["spend"]) == {"judge_calls", "judge_tokens", "judge_cost_usd", "accelerator_hours", "wall_hours"}
    assert status["spend"]["wall_hours"] > 0 and status["spend"]["judge_calls"] == 0
    assert rc1_here(root, "audit").returncode == 0


def test_a_halted_run_refuses_to_train_and_appends_nothing_without_a_reason(halted_run, tmp_path):
    import shutil

    root = tmp_path / "copy"
    shutil.copytree(halted_run[0], root, symlinks=True)
    before = log_bytes(root)
    for command in (("advance",), ("advance", "--all"), ("train",)):
        refused = rc1_here(root, *command)
        assert refused.returncode == 3, (command, refused.stderr)
        assert "HALTED by entropy_floor at step 10" in refused.stderr
    refused = rc1_here(root, "advance", "--from", "latest", "--set", "data.pool_size=999", "--because", "x")
    assert refused.returncode == 3 and "data.pool_size" in refused.stderr  # not amendable: the gates' config
    refused = rc1_here(root, "advance", "--set", "train.learning_rate=1e-4", "--because", "lower")
    assert refused.returncode == 2 and "add --from" in refused.stderr
    assert log_bytes(root) == before


def test_a_rollback_amends_the_learning_rate_from_the_checkpoint_it_names(halted_run, tmp_path):
    import shutil

    root = tmp_path / "copy"
    shutil.copytree(halted_run[0], root, symlinks=True)
    rolled = rc1_here(
        root,
        "advance",
        "--from",
        "step_4",
        "--set",
        "train.learning_rate=1e-4",
        "--because",
        "collapse: a gentler rate",
    )
    assert rolled.returncode == 3  # the rule is not silenced by an amendment: it halts again at step 10
    log = events(root)
    amended = next(e for e in log if e["type"] == "training_amended")
    assert amended["changes"] == {"train.learning_rate": {"old": 0.0015, "new": 0.0001}}
    ack = next(e for e in log if e["type"] == "halt_acknowledged")
    assert (ack["choice"], ack["from_step"], ack["reason"], ack["silenced"]) == (
        "rollback",
        4,
        "collapse: a gentler rate",
        False,
    )
    resumed = [e for e in log if e["type"] == "training_started"][-1]
    assert resumed["resume_from_step"] == 4
    after = {e["step"]: e for e in log[log.index(resumed) :] if e["type"] == "train_step"}
    # The amended peak on the schedule's own step: linear decay to 0 at step 12, so step 5 trains at 1e-4 × 8/12.
    assert after[5]["lr"] == pytest.approx(1e-4 * 8 / 12)
    assert trips(root) == [("entropy_floor", 10, "halt"), ("entropy_floor", 10, "halt")]
    assert [e["step"] for e in log if e["type"] == "checkpoint_saved"] == [4, 8, 8]
    status = json.loads(rc1_here(root, "status", "--json").stdout)
    assert status["amendments"] == {"train.learning_rate": 0.0001}
    assert rc1_here(root, "audit").returncode == 0
    # Step 8 as published again after the rollback, trained again from step 4 (saved before the amendment) with the
    # amended rate put over it, as the resume did: bit for bit, compared with the steps the log kept (the later ones).
    retrained = rc1_here(root, "audit", "--retrain", "step_8")
    assert retrained.returncode == 0 and "re-derived bit for bit" in retrained.stdout, retrained.stdout
    assert "steps 5–8 of this line were trained more than once" in retrained.stdout

    stopped = rc1_here(root, "advance", "--all", "--stop", "--because", "enough")
    assert stopped.returncode == 0, stopped.stderr
    log = events(root)
    done = log[-1]
    assert done["type"] == "run_completed" and done["reason"] == "stopped after entropy_floor's halt at step 10: enough"
    assert done["step"] == 8 and any(e["type"] == "release_evaluated" for e in log)
    assert rc1_here(root, "audit").returncode == 0


def test_going_on_past_a_halt_keeps_the_rule_quiet_and_completes_the_line(halted_run, tmp_path):
    import shutil

    root = tmp_path / "copy"
    shutil.copytree(halted_run[0], root, symlinks=True)
    refused = rc1_here(root, "advance", "--because", "")
    assert refused.returncode == 3
    went_on = rc1_here(root, "advance", "--all", "--because", "tiny model: its entropy is what it is")
    assert went_on.returncode == 0, went_on.stderr
    log = events(root)
    ack = next(e for e in log if e["type"] == "halt_acknowledged")
    assert (ack["choice"], ack["from_step"], ack["silenced"]) == ("continue", 8, True)
    assert trips(root) == [("entropy_floor", 10, "halt")]  # quiet: its signal never cleared
    assert log[-1]["type"] == "run_completed" and log[-1]["reason"] == "max_steps" and log[-1]["step"] == 12
    assert rc1_here(root, "audit").returncode == 0


@pytest.fixture(scope="module")
def stopped_run(tmp_path_factory):
    """A line a `stop` rule ended at its first evaluation past step 0 (no gain of 100 pp in one evaluation)."""
    root = make_workspace(
        tmp_path_factory.mktemp("stopped"),
        **{"monitors.plateau": {"window": 1, "min_gain_pp": 100.0, "action": "stop"}},
    )
    done = rc1_here(root, "advance", "--all")
    assert done.returncode == 0, done.stderr
    return root


def test_a_stop_rule_ends_the_line_early_with_its_verdict(stopped_run):
    root = stopped_run
    log = events(root)
    assert trips(root) == [("plateau", 4, "stop")]
    completed = log[-1]
    assert completed["type"] == "run_completed" and completed["reason"] == "stopped by plateau at step 4"
    assert completed["step"] == 4 and [e["step"] for e in log if e["type"] == "train_step"] == [1, 2, 3, 4]
    assert any(e["type"] == "release_evaluated" for e in log)
    status = json.loads(rc1_here(root, "status", "--json").stdout)
    assert status["complete"] and status["state"] == "CHECKPOINTED"
    assert rc1_here(root, "audit").returncode == 0


@pytest.mark.parametrize("kill_at", ["step@10", "trips@13"])
def test_a_run_killed_around_a_trip_trips_at_the_same_step(halted_run, tmp_path, kill_at):
    """Killed before step 10 was logged, and between its train_step and its trip (the 13th check: step 0's
    evaluation, steps 1-4, the evaluation at 4, steps 5-8, the evaluation at 8, steps 9-10): resumed from step 8, the
    run halts at step 10 as the uninterrupted one did."""
    root = make_workspace(tmp_path, **ALWAYS_LOW_ENTROPY)
    killed = rc1_killed_at(root, kill_at)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    resumed = rc1_here(root, "advance", "--all")
    assert resumed.returncode == 3 and "HALTED by entropy_floor at step 10" in resumed.stderr
    assert trips(root)[-1] == ("entropy_floor", 10, "halt") == trips(halted_run[0])[-1]
    assert rc1_here(root, "audit").returncode == 0


def _rewrite(root, keep) -> None:
    """The log rewritten with its chain made good again (seqs renumbered, each prev the line before's hash): what only
    the monitors' re-derivation can catch. `keep(event) -> event | None`."""
    lines, prev, seq = [], "0" * 64, 0
    for event in events(root):
        event = keep(event)
        if event is None:
            continue
        event.update(seq=seq, prev=prev)
        line = json.dumps(event, separators=(",", ":"), ensure_ascii=False).encode()
        lines.append(line)
        prev, seq = line_hash(line), seq + 1
    (root / "events/local.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    (root / "events/local.snapshot.json").unlink()


@pytest.mark.parametrize(
    "tamper, says",
    [
        (
            lambda e: {**e, "measured": {**e["measured"], "gain_pp": 99.0}} if e["type"] == "monitor_tripped" else e,
            "the rules do not give this trip here",
        ),
        (lambda e: None if e["type"] == "monitor_tripped" else e, "but the log does not record it"),
    ],
)
def test_audit_derives_every_trip_again_and_catches_an_edited_or_deleted_one(stopped_run, tmp_path, tamper, says):
    import shutil

    root = tmp_path / "copy"
    shutil.copytree(stopped_run, root, symlinks=True)
    _rewrite(root, tamper)
    audited = rc1_here(root, "audit", "--json")
    assert audited.returncode == 3
    findings = json.loads(audited.stdout)["findings"]
    assert any(f["check"] == "monitors" and says in f["message"] for f in findings), findings
