"""Replay: a pure fold of events into a Projection (no I/O, no clock, no randomness).

One small mutator per event type (singledispatch), or the type's entry in CHANGES_NOTHING saying why it has
none; a type with neither fails replay (tests/unit/test_replay.py holds every type of the union to exactly one).
Events that are machine triggers drive the RunMachine; an event the machine refuses is recorded as a violation and
not folded in (audit reports it; a writer refuses to append to such a log).
"""

from __future__ import annotations

from functools import singledispatch
from itertools import groupby

import msgspec

from rc1.run import events as ev
from rc1.run.door import refusal, trigger_of
from rc1.run.machine import RunMachine
from rc1.run.monitors.fold import observe, observe_steps
from rc1.run.projection import (
    AcrossSeedsView,
    AmendmentView,
    CheckpointRef,
    EvalPoint,
    ExportRef,
    GateView,
    HaltView,
    LineResult,
    Projection,
    ReleaseView,
    StepView,
    Violation,
)


class Replayer:
    """Holds the machine and the projection; `apply` folds one event in, `apply_all` a log's worth."""

    def __init__(self) -> None:
        self.machine = RunMachine()
        self.projection = Projection()

    def apply(self, event: ev.Event) -> None:
        p = self.projection
        p.events += 1
        p.head_seq = event.seq
        p.last_ts = event.ts
        p.run = event.run
        why = refusal(event, self.machine)
        if why is not None:
            # The line is there (the chain covers it) but what it claims never happened: not folded in.
            p.violations.append(Violation(seq=event.seq, message=why))
            return
        trigger = trigger_of(event)
        if trigger is not None:
            self.machine.trigger(trigger)
        p.state = self.machine.state
        _mutate(event, p)
        observe(p.monitor, p.watched, event)
        self.machine.complete = p.complete

    def apply_all(self, events: list[ev.Event]) -> None:
        """Fold events in order; the same as `apply` on each. A run of train_steps (most of a long log) is
        folded in one go once the machine has accepted two of them: the second leaves the machine where the
        first did, in the state the rest find it in, and a train_step changes nothing a guard reads, so the
        machine would accept each of the rest. Of those, only the last one's fields survive the fold."""
        for kind, run in groupby(events, key=type):
            if kind is not ev.TrainStep:
                for event in run:
                    self.apply(event)
                continue
            steps = list(run)
            violations = len(self.projection.violations)
            for first in steps[:2]:
                self.apply(first)
            rest = steps[2:]
            if rest and len(self.projection.violations) == violations:
                self._fold_steps(rest)
            else:
                for step in rest:
                    self.apply(step)

    def _fold_steps(self, steps: list[ev.TrainStep]) -> None:
        p, last = self.projection, steps[-1]
        p.events += len(steps)
        p.head_seq, p.last_ts, p.run = last.seq, last.ts, last.run
        _mutate(last, p)
        observe_steps(p.monitor, p.watched, steps)  # every step: the monitors' windows and the spend

    def allowed(self) -> list[str]:
        return self.machine.allowed()


def changed_gate_inputs(
    p: Projection, current: ev.Fingerprints
) -> tuple[str, int | None, list[tuple[str, str, str]]] | None:
    """(gate, its seq, [(input, recorded sha, current sha)…]) for the gate in force (round 2 before round 1) when
    an input it vouches for differs on disk now; None when nothing changed or no gate has passed."""
    for name in ("round2", "round1"):
        gate = p.gates[name]
        if gate.passed and gate.fingerprints is not None:
            changed = ev.changed_inputs(gate.fingerprints, current)
            return (name, gate.seq, changed) if changed else None
    return None


def replay(events: list[ev.Event]) -> Replayer:
    replayer = Replayer()
    replayer.apply_all(events)
    return replayer


# The event types that change nothing in the projection beyond the envelope (`Replayer.apply`: events, head_seq,
# last_ts, run), each with why; the monitors' fold (`observe`) reads every event on its own. Every other type has its
# mutator below.
CHANGES_NOTHING: dict[type[ev.Event], str] = {
    ev.ArtifactWritten: "a file a command wrote and its sha256: no state of the run depends on it; the handoff view "
    "lists it from the log's events",
    ev.ShadowRunCompleted: "round 2's shadow run: its statistics are its report's and round 2's verdict its check "
    "events'; the handoff view lists its report from the log's events",
    ev.LogRepaired: "`rc1 repair` moved a torn tail aside; the log goes on from its last whole line as it was",
}


@singledispatch
def _mutate(event: ev.Event, p: Projection) -> None:
    """An event type with no mutator of its own: nothing to do when it is declared in CHANGES_NOTHING, else an error
    (a mutator forgotten, never a silent no-op)."""
    if type(event) not in CHANGES_NOTHING:
        raise TypeError(
            f"replay has no mutator for {type(event).__name__}: register one in rc1/run/replay.py, or name the type "
            "in CHANGES_NOTHING with why it changes nothing"
        )


@_mutate.register
def _(event: ev.RunStarted, p: Projection) -> None:
    p.config_sha256 = event.config_sha256
    if event.keeps:
        p.kept_config = event.config_sha256


@_mutate.register
def _(event: ev.CheckPassed, p: Projection) -> None:
    p.checks[f"r{event.round}.{event.name}"] = True


@_mutate.register
def _(event: ev.CheckFailed, p: Projection) -> None:
    p.checks[f"r{event.round}.{event.name}"] = False


def _gate_passed(p: Projection, name: str, event) -> None:
    p.gates[name] = GateView(passed=True, fingerprints=event.fingerprints, seq=event.seq)
    p.last_error = None  # what failed before (a round, an invalidated gate) is behind the run now


@_mutate.register
def _(event: ev.Round1Passed, p: Projection) -> None:
    _gate_passed(p, "round1", event)


@_mutate.register
def _(event: ev.Round2Passed, p: Projection) -> None:
    _gate_passed(p, "round2", event)


@_mutate.register
def _(event: ev.GateFailed, p: Projection) -> None:
    p.gates[f"round{event.round}"].failures = list(event.failures)
    p.last_error = f"round {event.round} gate failed: " + ", ".join(event.failures)


@_mutate.register
def _(event: ev.GateInvalidated, p: Projection) -> None:
    p.gates = {"round1": GateView(), "round2": GateView()}
    p.gate_base = p.gate_selected = None  # measured on inputs no gate vouches for any more
    p.complete = False
    p.seed, p.finished, p.across_seeds = None, [], None  # lines trained on the old inputs count for nothing
    p.halt, p.amendments, p.watched, p.resume_step = None, {}, None, None
    p.last_error = f"gate invalidated: {event.input} changed ({event.old_sha256[:12]} -> {event.new_sha256[:12]})"


@_mutate.register
def _(event: ev.TrainingStarted, p: Projection) -> None:
    p.last_error = None  # a failure the line resumes from is behind it
    if event.seed != p.seed:  # a new line of training (another seed): nothing of the last line carries over
        p.checkpoints, p.evals, p.release, p.best_step, p.best_value = [], [], None, None, None
        p.gate_selected, p.promotions, p.best_metric = None, [], ""
        p.frozen_base = {}
    if not p.frozen_base and event.frozen_sha256 is not msgspec.UNSET:
        p.frozen_base = dict(event.frozen_sha256)
    p.seed, p.seeds = event.seed, list(event.seeds)
    p.watched = event.monitors
    p.training_segments += 1
    p.segment_first_step = event.resume_from_step
    p.step = event.resume_from_step
    p.max_steps = event.max_steps
    p.complete = False
    # Checkpoints past the resume point belong to an abandoned future; they are no longer "latest".
    p.checkpoints = [c for c in p.checkpoints if c.step <= event.resume_from_step]
    p.evals = [e for e in p.evals if e.step <= event.resume_from_step]
    p.resume_step = None
    if p.promotions and p.promotions[-1] > event.resume_from_step:  # a rollback past a promotion: best/ before it
        p.promotions = [step for step in p.promotions if step <= event.resume_from_step]
        p.best_step = p.promotions[-1] if p.promotions else None
        p.best_value = None
    if p.gate_selected is not None and p.gate_selected.step > event.resume_from_step:
        p.gate_selected = None
    p.release = None


@_mutate.register
def _(event: ev.TrainStep, p: Projection) -> None:
    p.step = event.step
    p.last_step = StepView(
        step=event.step,
        loss=event.loss,
        kl=event.kl,
        reward=event.reward,
        lr=event.lr,
        seq=event.seq,
        sec_per_step=event.sec_per_step,
    )


@_mutate.register
def _(event: ev.CheckpointSaved, p: Projection) -> None:
    if p.checkpoints and p.checkpoints[-1].step >= event.step:  # a step saved again (steps only grow otherwise)
        p.checkpoints = [c for c in p.checkpoints if c.step != event.step]
    p.checkpoints.append(CheckpointRef(step=event.step, dir=event.dir, files=event.files, seq=event.seq))


@_mutate.register
def _(event: ev.EvalCompleted, p: Projection) -> None:
    p.last_eval = {
        "step": float(event.step),
        "success": event.success,
        "mean_reward": event.mean_reward,
        "mem_peak_mb": event.mem_peak_mb,
    }
    if p.evals and p.evals[-1].step >= event.step:
        p.evals = [e for e in p.evals if e.step != event.step]
    p.evals.append(
        EvalPoint(
            step=event.step,
            hard_success=event.hard_success,
            success=event.success,
            mean_reward=event.mean_reward,
            buckets=event.buckets,
            hard_sampled_success=event.hard_sampled_success,
        )
    )


@_mutate.register
def _(event: ev.ReleaseEvaluated, p: Projection) -> None:
    p.release = ReleaseView(
        passed=event.passed,
        hard_gain_pp=event.hard_gain_pp,
        threshold=event.threshold_pp,
        step=event.step,
        ci_low_pp=event.ci_low_pp,
        ci_high_pp=event.ci_high_pp,
        n=event.n,
        samples=event.samples,
        baseline_success=event.baseline_success,
        selected_success=event.selected_success,
        selected_by=event.selected_by,
        failed=list(event.failed),
        release=event.release,
    )


@_mutate.register
def _(event: ev.GateSetEvaluated, p: Projection) -> None:
    if event.policy == "base":
        p.gate_base = event
    else:
        p.gate_selected = event


@_mutate.register
def _(event: ev.BestPromoted, p: Projection) -> None:
    p.best_step = event.step
    p.best_value = event.value
    p.best_metric = event.metric
    p.promotions.append(event.step)


@_mutate.register
def _(event: ev.TrainingFailed, p: Projection) -> None:
    p.last_error = f"training failed at step {event.step}: {event.error} (see {event.report})"


@_mutate.register
def _(event: ev.ReleaseAcrossSeeds, p: Projection) -> None:
    p.across_seeds = AcrossSeedsView(
        gains_pp=dict(event.gains_pp),
        mean_pp=event.mean_pp,
        spread_pp=event.spread_pp,
        threshold_pp=event.threshold_pp,
        passed=event.passed,
        release=event.release,
    )


@_mutate.register
def _(event: ev.TrackerAttached, p: Projection) -> None:
    p.trackers[event.backend] = event.run_id


@_mutate.register
def _(event: ev.ModelExported, p: Projection) -> None:
    p.exports.append(ExportRef(seq=event.seq, out=event.out, form=event.form, step=event.step, seed=event.seed))


@_mutate.register
def _(event: ev.MonitorTripped, p: Projection) -> None:
    if event.action == "halt":
        p.halt = HaltView(
            rule=event.rule,
            step=event.step,
            seed=event.seed,
            measured=dict(event.measured),
            threshold=dict(event.threshold),
            detail=event.detail,
            seq=event.seq,
        )
        p.last_error = f"halted by {event.rule} at step {event.step}: {event.detail}"


@_mutate.register
def _(event: ev.HaltAcknowledged, p: Projection) -> None:
    p.halt = None
    p.last_error = None
    p.resume_step = event.from_step


@_mutate.register
def _(event: ev.TrainingAmended, p: Projection) -> None:
    p.amendments.update({key: AmendmentView(value=change.new, seq=event.seq) for key, change in event.changes.items()})


@_mutate.register
def _(event: ev.RefusedSetAside, p: Projection) -> None:
    seqs = set(event.seqs)
    p.set_aside += [v for v in p.violations if v.seq in seqs]
    p.violations = [v for v in p.violations if v.seq not in seqs]


@_mutate.register
def _(event: ev.RunCompleted, p: Projection) -> None:
    if event.seed is not None:
        p.finished = [f for f in p.finished if f.seed != event.seed]
        p.finished.append(
            LineResult(
                seed=event.seed,
                step=event.step,
                best_step=event.best_step,
                final_checkpoint=event.final_checkpoint,
                release=p.release,
            )
        )
    done = {f.seed for f in p.finished}
    p.complete = all(seed in done for seed in p.seeds)  # a log from before seeds: complete at once
    p.last_error = None


def pending_seed(p: Projection, seeds: list[int], current: int | None) -> int:
    """The seed whose line of training comes next: `current` (the line the log last trained) while unfinished,
    else the first not yet finished (the caller has checked that one is left)."""
    done = {f.seed for f in p.finished}
    if current is not None and current in seeds and current not in done:
        return current
    return next(seed for seed in seeds if seed not in done)
