"""The run decides at the door: an event its rules refuse is never written (exit 3, log byte-identical), and a
log an older rc1 wrote refused events into reads, audits, and goes on after `rc1 repair` sets them aside."""

from __future__ import annotations

import json

import msgspec
import pytest
from conftest import make_workspace, rc1_here, training_started_fields

from rc1.app.session import Session
from rc1.config.loading import load_config
from rc1.core.errors import EventRefused, ExitCode
from rc1.core.workspace import Workspace
from rc1.eventlog.log import EventLog, read_log
from rc1.eventlog.snapshot import projection_shape, read_snapshot, replay_log, snapshot_path
from rc1.run import events as ev
from rc1.run.projection import Projection

FP = ev.Fingerprints(pool="p" * 64, shadow="s" * 64, config="c" * 64, weights="w" * 64)
SCORING = ev.ScoringSummary()


def _started(step: int = 0) -> dict:
    return training_started_fields(step)


def _step(step: int) -> dict:
    return dict(
        step=step, loss=0.1, kl=0.0, ratio=1.0, lr=1e-3, reward=0.5, mem_used_mb=1.0, sec_per_step=0.1, tokens=8
    )


def _gate_eval(policy: str) -> ev.GateSetEvaluated:
    return ev.GateSetEvaluated(
        policy=policy,
        step=0,
        checkpoint=None,
        gate_sha256="g" * 64,
        samples=1,
        temperature=1.0,
        generation_seed=0,
        item_ids=["g"],
        sampled=[0],
        greedy=[0],
        sampled_success=0.0,
        greedy_success=0.0,
    )


# How far along the run is (each command through the aggregate), and what each state must refuse.
TO = {
    "INIT": [],
    "R1_PASSED": [lambda run: run.conclude_round(1, [], FP, SCORING)],
    "TRAINING": [
        lambda run: run.conclude_round(1, [], FP, SCORING),
        lambda run: run.conclude_round(2, [], FP, SCORING),
        lambda run: run.start_training(**_started()),
    ],
    "complete": [
        lambda run: run.conclude_round(1, [], FP, SCORING),
        lambda run: run.conclude_round(2, [], FP, SCORING),
        lambda run: run.start_training(**_started()),
        lambda run: run.record_step(**_step(1)),
        lambda run: run.save_checkpoint(1, "checkpoints/local/step_00001", {}),
        lambda run: run.complete_line(1, None, "checkpoints/local/step_00001", 1234),
    ],
}
REFUSED = {
    "INIT": [
        ev.Round2Passed(fingerprints=FP, checks=[]),
        ev.TrainingStarted(**_started()),
        ev.TrainStep(**_step(1)),
        ev.CheckpointSaved(step=1, dir="d", files={}),
        ev.GateInvalidated(input="pool", old_sha256="a", new_sha256="b"),
        ev.EvalCompleted(step=0, n=1, mean_reward=0.0, success=0.0, per_task_success={}, buckets=[]),
        ev.BestPromoted(step=1, dir="d", metric="success", value=0.5, files={}),
        ev.RunCompleted(step=1, best_step=None, final_checkpoint="d"),
        ev.TrainingFailed(error="x", report="", step=0),
        _gate_eval("base"),
        _gate_eval("selected"),
        ev.CheckPassed(round=2, name="x", measured={}, thresholds={}),
        ev.GateFailed(round=2, failures=["x"]),
    ],
    "R1_PASSED": [
        ev.Round1Passed(fingerprints=FP, checks=[]),
        ev.TrainingStarted(**_started()),
        ev.CheckFailed(round=1, name="x", measured={}, thresholds={}),
        ev.GateFailed(round=1, failures=["x"]),
        ev.RunCompleted(step=1, best_step=None, final_checkpoint="d"),
    ],
    "TRAINING": [
        ev.Round2Passed(fingerprints=FP, checks=[]),
        _gate_eval("base"),
        ev.CheckPassed(round=2, name="x", measured={}, thresholds={}),
    ],
    "complete": [ev.TrainingStarted(**_started(1)), ev.RunCompleted(step=1, best_step=None, final_checkpoint="d")],
}
CASES = [(where, event) for where, events in REFUSED.items() for event in events]


@pytest.fixture
def root(tmp_path, monkeypatch):
    root = make_workspace(tmp_path)
    monkeypatch.chdir(root)
    return root


def _session() -> Session:
    return Session.open(load_config("configs/short.yaml"))


@pytest.mark.parametrize("where,event", CASES, ids=[f"{w}-{ev.event_type(e)}" for w, e in CASES])
def test_an_event_the_run_refuses_is_never_written(root, where, event):
    with _session() as session:
        for command in TO[where]:
            session.append(command(session.run))
    log = Workspace(root=root, run="local").log_path
    before = log.read_bytes() if log.exists() else b""
    with _session() as session:
        with pytest.raises(EventRefused, match=f"{ev.event_type(event)}.* is not allowed in state") as refused:
            session.append(event)
        assert refused.value.exit_code == ExitCode.GATE_CLOSED and "nothing was appended" in str(refused.value)
        assert session.projection.events == len(TO[where]) + (1 if TO[where] else 0)  # run_started + commands
    assert (log.read_bytes() if log.exists() else b"") == before
    if TO[where]:  # (the fingerprints here are made up: only the transitions are the point)
        audit = json.loads(rc1_here(root, "audit", "--json").stdout)
        assert not [f for f in audit["findings"] if f["check"] == "transition"]


def test_what_each_state_allows_is_still_written(root):
    with _session() as session:
        session.append(session.run.conclude_round(1, [], FP, SCORING))
        session.append(ev.CheckPassed(round=2, name="x", measured={}, thresholds={}))
        session.append(ev.CheckPassed(round=0, name="by hand", measured={}, thresholds={}))  # any state
        session.append(_gate_eval("base"))
        session.append(session.run.conclude_round(2, [], FP, SCORING))
        session.append(session.run.start_training(**_started()))
        session.append(session.run.record_step(**_step(1)))
        session.append(ev.EvalCompleted(step=1, n=1, mean_reward=0.0, success=0.0, per_task_success={}, buckets=[]))
        assert session.projection.state == "TRAINING" and not session.projection.violations


def test_a_log_an_older_rc1_wrote_refused_events_into_goes_on_after_repair(root):
    ws = Workspace(root=root, run="local")
    with EventLog(ws.log_path, ws.lock_path, "local") as log:  # below the door, as an older rc1 wrote
        log.append(ev.Round2Passed(fingerprints=FP, checks=[]))
    refused = rc1_here(root, "advance")
    assert refused.returncode == 3 and "refused" in refused.stderr and "rc1 repair" in refused.stderr
    assert rc1_here(root, "audit").returncode == 3

    repaired = rc1_here(root, "repair")
    assert repaired.returncode == 0 and "set aside 1 event(s)" in repaired.stdout, repaired.stderr
    assert [e.type if hasattr(e, "type") else ev.event_type(e) for e in read_log(ws.log_path).events][
        -1
    ] == "refused_set_aside"
    audit = rc1_here(root, "audit")
    assert audit.returncode == 0 and "set aside: round2_passed is not allowed in state INIT" in audit.stdout
    status = json.loads(rc1_here(root, "status", "--json").stdout)
    assert status["state"] == "INIT" and status["allowed"] == ["round1_passed"]


def test_a_snapshot_of_an_older_projection_is_ignored_and_the_log_replayed(root):
    with _session() as session:  # one training segment, and the snapshot the session leaves
        for command in TO["TRAINING"]:
            session.append(command(session.run))
    ws = Workspace(root=root, run="local")
    assert read_snapshot(ws) is not None and replay_log(ws)[0].projection.training_segments == 1

    # The snapshot an rc1 from before `training_segments` would have left: without the field, and of its shape.
    older = msgspec.defstruct(
        "Projection",
        [(f.name, f.type, _default(f)) for f in msgspec.structs.fields(Projection) if f.name != "training_segments"],
        kw_only=True,
    )
    raw = json.loads(snapshot_path(ws).read_bytes())
    del raw["projection"]["training_segments"]
    raw["shape"] = projection_shape(older)
    snapshot_path(ws).write_text(json.dumps(raw))
    assert projection_shape(older) != projection_shape()
    assert read_snapshot(ws) is None
    assert replay_log(ws)[0].projection.training_segments == 1  # not 0, as the old snapshot would have said
    status = json.loads(rc1_here(root, "status", "--json").stdout)
    assert status["state"] == "TRAINING"


def _default(field):
    if field.default is not msgspec.NODEFAULT:
        return field.default
    return msgspec.field(default_factory=field.default_factory)
