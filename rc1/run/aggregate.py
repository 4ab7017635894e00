"""The run as one aggregate: its machine and its projection, with command methods that decide.

Every event rc1 writes is built here, by a command method (record_check, conclude_round, start_training,
promote_best, judge_release, …): it applies the rules (rc1/run/verdicts.py) to the run as replayed so far, where a
command decides (a round's verdict from the check events it recorded, best/ from the evaluations in the log, a
release from the gate set's two evaluations), checks the rules at the door (rc1/run/door.py) and returns the event
they allow, or raises EventRefused (exit 3). The stages measure; they hand the aggregate numbers, never verdicts.

Persist-then-fold: the aggregate does not fold what it decides. The event is written first, then folded into the
same replayer (the session subscribes it to the log), so the projection only ever holds what the log holds: a
crash between deciding and writing leaves both as they were, and replay from the log gives the same projection
the writer had. The session persists and publishes only what was decided here, and asks `decide` again
for any event it is handed, so nothing the rules refuse is ever written: the log stays byte-identical. Once
written, the event is folded into the same replayer (the session subscribes it to the log), which is how the
aggregate learns what happened; it never folds an event it has not seen persisted.
"""

from __future__ import annotations

import math

import msgspec

from rc1.core.errors import EventRefused
from rc1.run import events as ev
from rc1.run.door import refusal
from rc1.run.machine import RunMachine
from rc1.run.monitors.fold import due
from rc1.run.monitors.rules import FROZEN_BASE, NON_FINITE
from rc1.run.projection import Projection
from rc1.run.replay import Replayer
from rc1.run.verdicts import PairedGain, across_seeds, gate_verdict, metric_value, promotes


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

    def start_run(self, **payload) -> ev.RunStarted:
        return self.decide(ev.RunStarted(**payload))

    def write_artifact(self, path: str, sha256: str, size: int, kind: str) -> ev.ArtifactWritten:
        return self.decide(ev.ArtifactWritten(path=path, sha256=sha256, bytes=size, kind=kind))

    def record_check(
        self,
        round_no: int,
        name: str,
        passed: bool,
        measured: dict[str, float],
        thresholds: dict[str, float],
        detail: str,
        tags: list[str],
    ) -> ev.CheckPassed | ev.CheckFailed:
        outcome = ev.CheckPassed if passed else ev.CheckFailed
        return self.decide(
            outcome(round=round_no, name=name, measured=measured, thresholds=thresholds, detail=detail, tags=list(tags))
        )

    def conclude_round(
        self, round_no: int, checks: list[str], fingerprints: ev.Fingerprints, scoring: ev.ScoringSummary
    ) -> ev.Round1Passed | ev.Round2Passed | ev.GateFailed:
        """The round's verdict, from the check events of `checks` in the log (each as this round last recorded it,
        never the stage's word): it passes when every one passed; a check it names that the log has not recorded
        in this round is refused."""
        recorded = self.projection.checks
        missing = [name for name in checks if f"r{round_no}.{name}" not in recorded]
        if missing:
            raise EventRefused(
                f"round {round_no}'s verdict names checks the log has not recorded in it ({', '.join(missing)}); "
                "nothing was appended"
            )
        failures = [name for name in checks if not recorded[f"r{round_no}.{name}"]]
        if failures:
            return self.decide(ev.GateFailed(round=round_no, failures=failures, scoring=scoring))
        passed = ev.Round1Passed if round_no == 1 else ev.Round2Passed
        return self.decide(passed(fingerprints=fingerprints, checks=list(checks), scoring=scoring))

    def invalidate_gate(self, input_name: str, old_sha256: str, new_sha256: str) -> ev.GateInvalidated:
        return self.decide(ev.GateInvalidated(input=input_name, old_sha256=old_sha256, new_sha256=new_sha256))

    def start_training(self, **payload) -> ev.TrainingStarted:
        return self.decide(ev.TrainingStarted(**payload))

    def record_step(self, **payload) -> ev.TrainStep:
        return self.decide(ev.TrainStep(**payload))

    def save_checkpoint(
        self, step: int, dir: str, files: dict[str, str], frozen_sha256: dict[str, str] | None = None
    ) -> ev.CheckpointSaved:
        frozen = msgspec.UNSET if not frozen_sha256 else frozen_sha256
        return self.decide(ev.CheckpointSaved(step=step, dir=dir, files=files, frozen_sha256=frozen))

    def record_evaluation(self, **payload) -> ev.EvalCompleted:
        return self.decide(ev.EvalCompleted(**payload))

    def record_gate_set_evaluation(self, **payload) -> ev.GateSetEvaluated:
        return self.decide(ev.GateSetEvaluated(**payload))

    def record_shadow_run(self, **payload) -> ev.ShadowRunCompleted:
        return self.decide(ev.ShadowRunCompleted(**payload))

    def promotion_value(self, step: int, metric: str) -> float | None:
        """The shadow metric of the evaluation at `step` when it promotes its checkpoint to best/ (it beats every
        evaluation before it, step 0 included: `promotes`); None when it does not, or the log holds no evaluation
        at `step`."""
        evals = self.projection.evals
        at = next((e for e in evals if e.step == step and e.buckets), None)
        if at is None:
            return None
        value = metric_value(metric, at.hard_success, at.hard_sampled_success, at.buckets)
        earlier = [
            metric_value(metric, e.hard_success, e.hard_sampled_success, e.buckets)
            for e in evals
            if e.step < step and e.buckets
        ]
        return value if promotes(value, earlier) else None

    def promote_best(self, step: int, dir: str, metric: str, files: dict[str, str]) -> ev.BestPromoted:
        value = self.promotion_value(step, metric)
        if value is None:
            raise EventRefused(
                f"best_promoted: step {step}'s evaluation does not beat every one before it on {metric}; "
                "nothing was appended"
            )
        return self.decide(ev.BestPromoted(step=step, dir=dir, metric=metric, value=value, files=files))

    def judge_release(
        self, gain: PairedGain, threshold_pp: float, metric: str, release: bool = True
    ) -> ev.ReleaseEvaluated:
        """The line's release verdict: the paired gain the stage measured on the gate set's two evaluations in the
        log (step 0's and the selected checkpoint's), held to the rule (rc1/run/verdicts.py). `release` False: a
        smoke run's, labelled not a release."""
        p = self.projection
        if p.gate_base is None or p.gate_selected is None:
            raise EventRefused(
                "release_evaluated: the log holds no gate-set evaluation of the step-0 policy and of the selected "
                "checkpoint; nothing was appended"
            )
        return self.decide(
            self.verdict_event(p.gate_base, p.gate_selected, gain, threshold_pp, metric, p.seed, release)
        )

    @staticmethod
    def verdict_event(
        base: ev.GateSetEvaluated,
        selected: ev.GateSetEvaluated,
        gain: PairedGain,
        threshold_pp: float,
        metric: str,
        seed: int | None,
        release: bool = True,
    ) -> ev.ReleaseEvaluated:
        """A line's verdict from its two gate-set evaluations and the paired gain measured on them (a pure function
        of the log's events and the gain, the rule in rc1/run/verdicts.py): `judge_release` decides it at the write,
        and `rc1 audit --rescore` derives it again the same way to compare with the one recorded (writing nothing)."""
        verdict = gate_verdict(base, selected, gain, threshold_pp)
        return ev.ReleaseEvaluated(
            step=selected.step,
            selected_by=selected.selected_by,
            items="gate",
            n=gain.n,
            samples=selected.samples,
            baseline_success=gain.baseline,
            selected_success=gain.selected,
            baseline_greedy=base.greedy_success,
            selected_greedy=selected.greedy_success,
            hard_gain_pp=gain.gain_pp,
            ci_low_pp=gain.ci_low_pp,
            ci_high_pp=gain.ci_high_pp,
            confidence=gain.confidence,
            resamples=gain.resamples,
            bootstrap_seed=gain.seed,
            threshold_pp=threshold_pp,
            passed=verdict.passed,
            failed=list(verdict.failed),
            metric=metric,
            seed=seed,
            release=release,
        )

    def judge_across_seeds(self, threshold_pp: float, release: bool = True) -> ev.ReleaseAcrossSeeds | None:
        """The verdict over every finished line of training; None when a line has no release of its own (a run
        begun before the gate set existed)."""
        releases = {str(line.seed): line.release for line in self.projection.finished}
        if not releases or any(r is None for r in releases.values()):
            return None
        verdict = across_seeds(
            {seed: r.hard_gain_pp for seed, r in releases.items()}, [r.passed for r in releases.values()], threshold_pp
        )
        return self.decide(
            ev.ReleaseAcrossSeeds(
                gains_pp=verdict.gains_pp,
                mean_pp=verdict.mean_pp,
                spread_pp=verdict.spread_pp,
                threshold_pp=threshold_pp,
                passed=verdict.passed,
                release=release,
            )
        )

    def export_model(self, **payload) -> ev.ModelExported:
        return self.decide(ev.ModelExported(**payload))

    def attach_tracker(self, backend: str, run_id: str) -> ev.TrackerAttached:
        return self.decide(ev.TrackerAttached(backend=backend, run_id=run_id))

    def repair_log(self, **payload) -> ev.LogRepaired:
        return self.decide(ev.LogRepaired(**payload))

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

    def trip_frozen_base(self, step: int, moved: list[str], detail: str) -> ev.MonitorTripped:
        """The always-on guard: the frozen base's sampled tensors no longer hash as the line's first record says
        (rc1/run/monitors/rules/frozen_base.py); halts the run at `step`."""
        return self.decide(
            ev.MonitorTripped(
                rule=FROZEN_BASE,
                step=step,
                seed=self.projection.seed,
                measured={"moved_tensors": float(len(moved))},
                threshold={"moved_tensors": 0.0},
                window=1,
                action="halt",
                detail=detail,
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
