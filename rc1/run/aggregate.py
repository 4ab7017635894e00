"""The run as one aggregate: its machine and its projection, with command methods that decide.

A command method (pass_round, start_training, record_step, save_checkpoint, …) checks the rules at the door
(rc1/run/door.py) against the run as replayed so far and returns the event they allow, or raises
EventRefused (exit 3). The session persists and publishes only what was decided here, and asks `decide` again
for any event it is handed, so nothing the rules refuse is ever written: the log stays byte-identical. Once
written, the event is folded into the same replayer (the session subscribes it to the log), which is how the
aggregate learns what happened; it never folds an event it has not seen persisted.
"""

from __future__ import annotations

import math

from rc1.core.errors import EventRefused
from rc1.run import events as ev
from rc1.run.door import refusal
from rc1.run.machine import RunMachine
from rc1.run.monitors.fold import due
from rc1.run.monitors.rules import NON_FINITE
from rc1.run.replay import Projection, Replayer


class RunAggregate:
    def __init__(self, replayer: Replayer):
        self.replayer = replayer

    @property
    def projection(self) -> Projection:
        return self.replayer.projection

    @property
    def machine(self) -> RunMachine:
        return self.replayer.machine

    def decide(self, event: ev.Event) -> ev.Event:
        """`event` when the run may record it now; else EventRefused, saying why and what is allowed."""
        why = refusal(event, self.machine)
        if why is not None:
            allowed = ", ".join(self.machine.allowed()) or "nothing"
            raise EventRefused(f"{why}; nothing was appended (the machine allows now: {allowed})")
        return event

    # The commands of the run: each returns the event it decided on.

    def pass_round(
        self, round_no: int, fingerprints: ev.Fingerprints, checks: list[str], scoring: ev.ScoringSummary
    ) -> ev.Round1Passed | ev.Round2Passed:
        passed = ev.Round1Passed if round_no == 1 else ev.Round2Passed
        return self.decide(passed(fingerprints=fingerprints, checks=checks, scoring=scoring))

    def fail_round(self, round_no: int, failures: list[str], scoring: ev.ScoringSummary) -> ev.GateFailed:
        return self.decide(ev.GateFailed(round=round_no, failures=failures, scoring=scoring))

    def invalidate_gate(self, input_name: str, old_sha256: str, new_sha256: str) -> ev.GateInvalidated:
        return self.decide(ev.GateInvalidated(input=input_name, old_sha256=old_sha256, new_sha256=new_sha256))

    def start_training(self, **payload) -> ev.TrainingStarted:
        return self.decide(ev.TrainingStarted(**payload))

    def record_step(self, **payload) -> ev.TrainStep:
        return self.decide(ev.TrainStep(**payload))

    def save_checkpoint(self, step: int, dir: str, files: dict[str, str]) -> ev.CheckpointSaved:
        return self.decide(ev.CheckpointSaved(step=step, dir=dir, files=files))

    def fail_training(self, error: str, report: str) -> ev.TrainingFailed:
        return self.decide(ev.TrainingFailed(error=error, report=report, step=self.projection.step))

    def complete_line(
        self, step: int, best_step: int | None, final_checkpoint: str, seed: int | None, reason: str = "max_steps"
    ) -> ev.RunCompleted:
        return self.decide(
            ev.RunCompleted(step=step, best_step=best_step, final_checkpoint=final_checkpoint, seed=seed, reason=reason)
        )

    def monitor_trips(self, up_to_step: int | None = None) -> list[ev.MonitorTripped]:
        """The trips the monitor rules give at the last check (rc1/run/monitors/fold.py `due`), as events; with
        `up_to_step`, only those measured at or before it (a resume: a check past its checkpoint is trained again)."""
        p = self.projection
        return [
            ev.MonitorTripped(
                rule=d.rule,
                step=d.reading.step,
                seed=p.seed,
                measured=dict(d.reading.measured),
                threshold=dict(d.reading.thresholds),
                window=d.reading.window,
                action=d.action,
                detail=d.reading.detail,
                not_finite=dict(d.reading.not_finite),
            )
            for d in due(p.monitor, p.watched)
            if up_to_step is None or d.reading.step <= up_to_step
        ]

    def trip_non_finite(self, step: int, measured: dict[str, float], detail: str) -> ev.MonitorTripped:
        """The always-on guard: a loss, gradient norm or weight that is not finite halts the run at `step` (the values
        that are not finite are kept as text: JSON has no such numbers)."""
        finite = {name: value for name, value in measured.items() if math.isfinite(value)}
        not_finite = {name: repr(value) for name, value in measured.items() if not math.isfinite(value)}
        return self.decide(
            ev.MonitorTripped(
                rule=NON_FINITE,
                step=step,
                seed=self.projection.seed,
                measured=finite,
                threshold={},
                window=1,
                action="halt",
                detail=detail,
                not_finite=not_finite,
            )
        )

    def acknowledge_halt(
        self, choice: str, reason: str, from_checkpoint: str | None, from_step: int | None, silenced: bool
    ) -> ev.HaltAcknowledged:
        halt = self.projection.halt
        if halt is None:
            raise EventRefused(
                f"halt_acknowledged: the run is not halted (state {self.machine.state}); nothing was appended"
            )
        return self.decide(
            ev.HaltAcknowledged(
                rule=halt.rule,
                step=halt.step,
                seed=halt.seed,
                choice=choice,
                reason=reason,
                from_checkpoint=from_checkpoint,
                from_step=from_step,
                silenced=silenced,
            )
        )

    def amend_training(self, changes: dict[str, ev.Amended]) -> ev.TrainingAmended:
        return self.decide(ev.TrainingAmended(changes=changes))

    def set_aside_refused(self) -> ev.RefusedSetAside:
        """The explicit way forward for a log an older rc1 wrote refused events into (`rc1 repair`)."""
        violations = self.projection.violations
        return self.decide(
            ev.RefusedSetAside(seqs=[v.seq for v in violations], messages=[v.message for v in violations])
        )
