"""Audit of the monitors: every trip in the log is one the rules give, and every trip the rules give is in the log.

The log is folded again from its first line; after each check (a train_step or an eval_completed) the trips the rules
give are due, and must be the next monitor_tripped events, before the run goes on (its next step, evaluation,
checkpoint or verdict). A due trip that a resume made moot (training resumed from a checkpoint before its step, so
that step is trained again and checked again) is not owed. A non-finite trip is not derived from the events before
it: it must name the value that was not finite (`not_finite`). A frozen_base trip is derived from the line's frozen
records (training_started and checkpoint_saved `frozen_sha256`): one whose hashes moved from the line's first is owed
before the line trains another step, and a trip with no such record before it is a finding."""

from __future__ import annotations

import math

import msgspec

from rc1.run import events as ev
from rc1.run.aggregate import RunAggregate
from rc1.run.monitors.rules import FROZEN_BASE, NON_FINITE
from rc1.run.monitors.rules.frozen_base import moved
from rc1.run.replay import Replayer


class TripFinding(msgspec.Struct, frozen=True, kw_only=True):
    seq: int | None
    message: str


# Events by which the trips of the last check must have been written: the run went on past that check. (A failure
# or a new session does not: the next session records what it owes before it trains, checked at its training_started.)
_MOVES_ON = (
    ev.TrainStep,
    ev.EvalCompleted,
    ev.CheckpointSaved,
    ev.TrainingStarted,
    ev.RunCompleted,
    ev.GateSetEvaluated,
    ev.ReleaseEvaluated,
    ev.HaltAcknowledged,
)


def trip_findings(events: list[ev.Event]) -> tuple[list[TripFinding], list[TripFinding]]:
    """(findings, notes): trips the log holds that the rules do not give, and trips the rules give that it lacks;
    notes for trips owed at the very end of the log (its writer was stopped before it could write them)."""
    if not any(isinstance(e, ev.TrainingStarted) and e.monitors is not None for e in events):
        # No line was watched (a log from before monitors): no rule gives a trip, so none is owed, and only a
        # non-finite one (the always-on guard) can be in the log. No fold needed on a long log.
        return [_unwatched(e) for e in events if isinstance(e, ev.MonitorTripped) and _unwatched(e)], []
    replayer = Replayer()
    run = RunAggregate(replayer)
    findings: list[TripFinding] = []
    pending: list[tuple[int, ev.MonitorTripped]] = []  # (the check's seq, the trip the rules give there)
    frozen: dict[str, str] = {}  # the line's latest frozen record
    owed_frozen: int | None = None  # the seq of a frozen record that moved, until its trip
    for event in events:
        if isinstance(event, ev.TrainStep) and owed_frozen is not None:
            findings.append(
                TripFinding(
                    seq=owed_frozen, message="the frozen base moved here but no frozen_base trip halted the run"
                )
            )
            owed_frozen = None
        if isinstance(event, ev.MonitorTripped) and event.rule == FROZEN_BASE:
            now = moved(replayer.projection.frozen_base, frozen)
            if len(now) == 0 or event.measured.get("moved_tensors") != len(now):
                findings.append(
                    TripFinding(
                        seq=event.seq,
                        message=f"a frozen_base trip naming {event.measured.get('moved_tensors')} moved tensors where "
                        f"the line's frozen records give {len(now)}",
                    )
                )
            owed_frozen = None
        elif isinstance(event, ev.MonitorTripped):
            if event.rule == NON_FINITE:
                if not event.not_finite:
                    findings.append(
                        TripFinding(seq=event.seq, message="a non_finite trip that names no value that was not finite")
                    )
            else:
                match = next((i for i, (_, due) in enumerate(pending) if _same(due, event)), None)
                if match is None:
                    findings.append(
                        TripFinding(
                            seq=event.seq,
                            message=f"monitor_tripped {event.rule} at step "
                            f"{event.step}: the rules do not give this trip here",
                        )
                    )
                else:
                    pending.pop(match)
        elif isinstance(event, _MOVES_ON) or isinstance(event, ev.GateInvalidated):
            moot = isinstance(event, ev.TrainingStarted | ev.GateInvalidated)
            for check, due in pending:
                if moot and (not isinstance(event, ev.TrainingStarted) or due.step > event.resume_from_step):
                    continue  # the step is trained again (or the gates are gone): its trips are derived again
                findings.append(
                    TripFinding(
                        seq=check,
                        message=f"{due.rule} trips at step {due.step} ({due.action}: "
                        f"{due.detail}) but the log does not record it",
                    )
                )
            pending = []
        violations = len(replayer.projection.violations)
        replayer.apply(event)
        if isinstance(event, ev.TrainingStarted | ev.CheckpointSaved) and event.frozen_sha256 is not msgspec.UNSET:
            frozen = dict(event.frozen_sha256)
            if moved(replayer.projection.frozen_base, frozen):
                owed_frozen = event.seq
        folded = len(replayer.projection.violations) == violations  # a refused event is a transition finding
        if folded and isinstance(event, ev.TrainStep | ev.EvalCompleted):
            pending = [(event.seq, due) for due in run.monitor_trips()]
    notes = [
        TripFinding(
            seq=check,
            message=f"{due.rule} trips at step {due.step} ({due.action}); the log ends before "
            "it is recorded (the next command on the run records it)",
        )
        for check, due in pending
    ]
    return findings, notes


def _unwatched(trip: ev.MonitorTripped) -> TripFinding | None:
    if trip.rule == NON_FINITE and trip.not_finite:
        return None
    return TripFinding(
        seq=trip.seq, message=f"monitor_tripped {trip.rule} at step {trip.step}: the rules do not give this trip here"
    )


def _same(due: ev.MonitorTripped, logged: ev.MonitorTripped) -> bool:
    """The same trip: rule, step, action, window, thresholds, and what it measured (to the last few bits: the
    intervals' quantiles come from scipy, whose builds may differ there)."""
    return (
        (due.rule, due.step, due.action, due.window, due.threshold, due.not_finite)
        == (logged.rule, logged.step, logged.action, logged.window, logged.threshold, logged.not_finite)
        and due.measured.keys() == logged.measured.keys()
        and all(math.isclose(due.measured[k], logged.measured[k], rel_tol=1e-9, abs_tol=1e-12) for k in due.measured)
    )
