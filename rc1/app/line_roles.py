"""The two parts a process plays in a line of training, chosen once per process (`role_of`):

- the **writer** (rank 0, or the only process) records: the train_step events, the checkpoints, the monitors' trips,
  a failure, the line's completion and its release verdict;
- a **joiner** (every other rank of a multi-process launch) records nothing: it trains its share of each batch,
  generates its share of each evaluation and of the release verdict (rank 0 gathers, scores and records them), and
  leaves with rank 0's verdict.

rc1/app/train.py's `TrainingLine` is the recipe; each step of it that differs by rank asks its role.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NoReturn

from rc1.app.halt import halted
from rc1.app.release import evaluate_release, evaluate_release_across_seeds, join_release
from rc1.app.session import Session
from rc1.app.train_hooks import EvalWorker, EventHooks, base_moved, record_trips
from rc1.core import distributed
from rc1.core.errors import DiskFull, Halted, TrainingError
from rc1.core.failure import write_error_report
from rc1.run.monitors.rules import NON_FINITE
from rc1.run.projection import CheckpointRef
from rc1.train.divergence import NonFiniteStep
from rc1.train.protocols import Verdict


@dataclass(frozen=True)
class Writer:
    """Rank 0, or the only process: it records, and decides how the line ends."""

    session: Session
    seeds: list[int]
    base_seed: int  # the data's seed: it builds the built-in base model every line's verdict loads weights onto

    def owed_trips(self, up_to_step: int) -> Verdict | None:
        """The trips of the line's last check at or before `up_to_step` that a kill (or a failure) left unrecorded."""
        return record_trips(self.session, up_to_step=up_to_step)

    def hooks(self, engine, shadow, scoring, batch_mix, rollouts) -> EventHooks:
        return EventHooks(self.session, engine, shadow, scoring, batch_mix, rollouts)

    def check_first(self, hooks: EventHooks) -> Verdict | None:
        """The step-0 evaluation, and the monitors' check of it."""
        hooks.evaluate(0)
        return record_trips(self.session)

    def base_moved(self, frozen: dict[str, str], step: int) -> Verdict | None:
        """At a segment's start: the frozen_base guard's halt where the base just loaded is not the line's first."""
        return base_moved(self.session, frozen, step, "between the line's start and this resume")

    def non_finite(self, fault: NonFiniteStep) -> Verdict:
        """Every rank meets a non-finite step (the gradients are all-reduced); this one records it."""
        self.session.append(self.session.run.trip_non_finite(fault.step, fault.measured, fault.what))
        return Verdict(action="halt", rule=NON_FINITE, step=fault.step, message=fault.what)

    def failed(self, error: Exception) -> NoReturn:
        """Training raised: its error report, and training_failed in the log (when the disk lets it be written)."""
        session = self.session
        report = write_error_report(error, session.ws, step=session.projection.step)
        unlogged = ""
        try:
            session.append(session.run.fail_training(f"{type(error).__name__}: {error}", str(report or "")))
        except DiskFull as full:  # the log is still whole: it ends at its last event
            unlogged = f"; training_failed could not be logged: {full}"
        details = f"details in {report}" if report else "no error report: it could not be written"
        raise TrainingError(
            f"training failed at step {session.projection.step}: {error} ({details}){unlogged}"
        ) from error

    def complete(self, final: CheckpointRef, reason: str = "max_steps") -> None:
        """The release verdict on `final` (every rank joins it), run_completed, and across seeds after the last line."""
        session = self.session
        p = session.projection
        evaluate_release(session, final, self.base_seed)  # nothing to do when the verdict is logged
        session.append(session.run.complete_line(final.step, p.best_step, final.dir, p.seed, reason))
        if len(self.seeds) > 1 and p.complete:
            evaluate_release_across_seeds(session)

    def end(self, verdict: Verdict) -> None:
        """Training ended on a monitor's verdict: a halt leaves the run HALTED (exit 3); a stop completes the line from
        its newest checkpoint at or before the step, and the release verdict runs as at max_steps."""
        p = self.session.projection
        if verdict.action == "halt":
            raise halted(p, self.session.ws.run)
        self.complete(final_before(p, verdict.step), stopped_reason(p.monitor.stopping))

    def finish(self, verdict: Verdict | None, max_steps: int) -> None:
        """After training: end on its verdict, or complete from the checkpoint at max_steps."""
        if verdict is not None:
            self.end(verdict)
            return
        latest = self.session.projection.latest_checkpoint
        if latest is None or latest.step != max_steps:
            raise TrainingError(
                f"training stopped at step {self.session.projection.step} without a checkpoint at max_steps {max_steps}"
            )
        self.complete(latest)


@dataclass(frozen=True)
class Joiner:
    """A rank other than 0: it records nothing and leaves with rank 0's verdict."""

    session: Session
    base_seed: int

    def owed_trips(self, up_to_step: int) -> None:
        return None  # rank 0 records them; this rank learns the verdict from it

    def hooks(self, engine, shadow, scoring, batch_mix, rollouts) -> EvalWorker:
        return EvalWorker(self.session.config, engine, shadow, rollouts)

    def check_first(self, hooks: EvalWorker) -> None:
        hooks.evaluate(0)  # its share of the replies
        return None

    def base_moved(self, frozen: dict[str, str], step: int) -> None:
        return None  # rank 0 records it; this rank learns the verdict from it

    def non_finite(self, fault: NonFiniteStep) -> Verdict:
        return Verdict(action="halt", rule=NON_FINITE, step=fault.step, message=fault.what)

    def failed(self, error: Exception) -> NoReturn:
        raise error

    def complete(self, final: CheckpointRef, reason: str = "max_steps") -> None:
        join_release(self.session, self.base_seed)  # rank 0 completes the line; this rank generates its share

    def end(self, verdict: Verdict) -> None:
        if verdict.action == "halt":
            raise Halted(
                f"rank {distributed.rank()}: halted by {verdict.rule} at step {verdict.step} (rank 0 says how to go on)"
            )
        join_release(self.session, self.base_seed)

    def finish(self, verdict: Verdict | None, max_steps: int) -> None:
        if verdict is not None:
            self.end(verdict)
        else:
            join_release(self.session, self.base_seed)


Role = Writer | Joiner


def role_of(session: Session, seeds: list[int], base_seed: int) -> Role:
    """This process's part in the line: the one choice between writing and joining."""
    return Writer(session, seeds, base_seed) if distributed.is_writer() else Joiner(session, base_seed)


def final_before(p, step: int) -> CheckpointRef:
    """The checkpoint a line that stopped at `step` completes from: its newest at or before the step."""
    final = [c for c in p.checkpoints if c.step <= step]
    if not final:
        raise TrainingError(
            f"the line stopped at step {step} before its first checkpoint: nothing to take to the "
            "verdict; resume it (rc1 advance) or start a new run"
        )
    return final[-1]


def stopped_reason(trip) -> str:
    """run_completed's reason for a line that ended early: a `stop` trip, or a person's choice at a halt."""
    if trip is None:
        return "stopped"
    if trip.reason:
        return f"stopped after {trip.rule}'s halt at step {trip.step}: {trip.reason}"
    return f"stopped by {trip.rule} at step {trip.step}"
