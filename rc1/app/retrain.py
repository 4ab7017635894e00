"""`rc1 audit --retrain`: a checkpoint trained again from the one before it, and compared with what the log says
produced it (docs/rollouts-and-audit.md, "Retraining a checkpoint").

The line's engine is built as `rc1 train` builds it (rc1/app/line_engine.py: the run's kept config, the rollback's
amendments in force, the line's seed and base), in a scratch folder, and resumed from the start checkpoint as a
resume would (its weights, optimizer, scheduler, RNG, sampler and strategy state). Each step it trains is compared
with the train_step the log kept (every field but its time and memory, and the judge's calls); each checkpoint it
stages where the log has one of the line, with that checkpoint, file by file (rc1/train/checkpoint_diff.py). Nothing
of the run is written: not its log, its checkpoints, its views or its archive.

A line that recorded `exact_resume` retrains bit for bit, so any difference is a finding (exit 3) naming the first
step and the first tensor that differ. Elsewhere (vLLM's sampling; CUDA kernels that are not deterministic) the
differences are measured and reported as notes, never as a pass.
"""

from __future__ import annotations

import contextlib
import shutil
import sys
import time
from pathlib import Path

import msgspec

from rc1.app.line_engine import LineEngine, build_line_engine
from rc1.app.policy import line_session
from rc1.app.retrain_plan import RetrainPlan
from rc1.app.rollouts import RolloutRecorder
from rc1.app.train_hooks import step_fields
from rc1.config.loading import LoadedConfig
from rc1.core import distributed
from rc1.core.errors import BadInput
from rc1.core.fsutil import atomic_write_bytes
from rc1.core.workspace import Workspace
from rc1.eventlog.audit import Finding
from rc1.scoring.archive import SHARD_NAME
from rc1.train import checkpoints
from rc1.train.checkpoint_diff import CheckpointComparison, compare_checkpoint
from rc1.train.divergence import NonFiniteStep
from rc1.train.metrics import StepMetrics
from rc1.train.protocols import TrainingEnded, Verdict

# A train_step's fields that are the process's circumstances, not what the step computed.
CIRCUMSTANCE = ("sec_per_step", "mem_used_mb")


class StepDifference(msgspec.Struct, frozen=True, kw_only=True):
    step: int
    seq: int  # the recorded train_step's
    field: str
    recorded: str  # JSON, as the log has it
    retrained: str


class RetrainReport(msgspec.Struct, kw_only=True):
    target: str  # the checkpoint retrained, relative to the workspace
    start: str  # the checkpoint it was retrained from, or "base" (the line's start)
    steps: list[int]  # the steps trained again
    exact: bool  # the line recorded exact_resume: a difference is a finding
    differences: list[StepDifference]
    checkpoints: list[CheckpointComparison]
    seconds: float  # building the engine, training and comparing
    train_seconds: float  # the steps alone (their sec_per_step)
    recorded_sec_per_step: float  # the recorded steps' mean
    findings: list[Finding] = msgspec.field(default_factory=list)
    notes: list[Finding] = msgspec.field(default_factory=list)

    @property
    def verified(self) -> bool:
        """Re-derived bit for bit: an exact line, every step and checkpoint compared equal."""
        return self.exact and not self.differences and all(c.same for c in self.checkpoints) and not self.findings


class _LineView:
    """The run as a line of training reads it, without its log: what the engine's recipe reads."""

    def __init__(self, loaded: LoadedConfig, ws: Workspace):
        self.loaded, self.ws = loaded, ws

    @property
    def config(self):
        return self.loaded.config


def retrain(loaded: LoadedConfig, ws: Workspace, plan: RetrainPlan) -> RetrainReport | None:
    """Train `plan`'s steps again and compare; the report on rank 0, None on the other ranks of a launch."""
    from rc1.train.device import deterministic_kernels, select_device

    started = time.perf_counter()
    _refuse_other_launch(plan)
    seeds = list(loaded.config.run.seeds)
    line = line_session(_LineView(loaded, ws), plan.seed if plan.seed is not None else loaded.config.run.seed, seeds)
    _refuse_other_engine(line.config, plan)
    if plan.start is not None:
        problems = checkpoints.verify(ws.root / plan.start.dir, plan.start.files)
        if problems:  # the audit's checkpoint check names it too
            return _unstartable(plan, problems[0]) if distributed.is_writer() else None
    scratch = _scratch(ws)
    try:
        deterministic_kernels(select_device(), line.config.train.deterministic)
        built = build_line_engine(line, loaded.config.run.seed, plan.amendments, scratch / "staging")
        if built.scoring.judge is not None:  # what it answers from its cache is free; what it is asked anew is paid
            built.scoring.judge.ledger.scope = "retrain"
        hooks = _Comparing(plan, ws.root, built) if distributed.is_writer() else _Following(built.recorder)
        resume_from = ws.root / plan.start.dir if plan.start is not None else None
        stopped = None
        try:
            built.engine.train(hooks, resume_from, amended=frozenset(plan.amended))
        except TrainingEnded:
            pass
        except NonFiniteStep as fault:  # every rank meets it; the steps the log kept were finite
            stopped = f"retraining stopped at a value that is not finite ({fault})"
        finally:
            built.engine.close()
        if not distributed.is_writer():
            return None
        return hooks.report(time.perf_counter() - started, stopped)
    finally:
        distributed.barrier()
        if distributed.is_writer():
            shutil.rmtree(scratch, ignore_errors=True)
            with contextlib.suppress(OSError):  # another retrain's folder may be there
                scratch.parent.rmdir()


def _unstartable(plan: RetrainPlan, problem: str) -> RetrainReport:
    message = f"{plan.target.dir} cannot be retrained from {plan.start.dir}: {problem} (another: --from)"
    return RetrainReport(
        target=plan.target.dir,
        start=plan.start.dir,
        steps=[],
        exact=plan.exact,
        differences=[],
        checkpoints=[],
        seconds=0.0,
        train_seconds=0.0,
        recorded_sec_per_step=0.0,
        findings=[Finding(check="retrain", seq=plan.start.seq, message=message)],
    )


def _refuse_other_launch(plan: RetrainPlan) -> None:
    processes = distributed.world_size()
    if processes != plan.processes:
        raise BadInput(
            f"--retrain {plan.target.dir}: its steps were trained on {plan.processes} process(es), and this is "
            f"{processes}; run it as they were: torchrun --nproc-per-node {plan.processes} -m rc1 audit --retrain "
            f"{plan.target.dir}"
        )


def _refuse_other_engine(config, plan: RetrainPlan) -> None:
    if (config.engine.name, config.engine.strategy) != (plan.engine, plan.strategy):
        raise BadInput(
            f"--retrain {plan.target.dir}: it was trained by {plan.engine}×{plan.strategy}, and the run's kept "
            f"config says {config.engine.name}×{config.engine.strategy}"
        )


def _scratch(ws: Workspace) -> Path:
    """A folder of the workspace's own for the retrain's staged checkpoints (beside the run's, never in them), the
    same on every rank."""
    import tempfile

    folder = None
    if distributed.is_writer():
        parent = ws.root / ".rc1-retrain"
        parent.mkdir(exist_ok=True)
        folder = tempfile.mkdtemp(prefix=f"{ws.run}-", dir=parent)
    return Path(distributed.share(folder))


class _Following:
    """A rank other than 0: it hands its share of each step's rollouts to rank 0, and compares nothing."""

    def __init__(self, recorder: RolloutRecorder):
        self._recorder = recorder

    def on_step(self, metrics: StepMetrics) -> Verdict | None:
        self._recorder.close_step(metrics.step)
        return None

    def on_checkpoint(self, step: int, staged_dir: Path) -> Verdict | None:
        return None

    def close(self) -> None:
        pass


class _Comparing:
    """Rank 0's hooks: each step against its train_step, each checkpoint against the log's; a stop at the target."""

    def __init__(self, plan: RetrainPlan, root: Path, built: LineEngine):
        self.plan, self.root = plan, root
        self._recorder, self._sampling = built.recorder, built.sampling
        self._recorded = {ref.step: ref for ref in [*plan.between, plan.target]}
        self.trained: list[int] = []
        self.differences: list[StepDifference] = []
        self.compared: list[CheckpointComparison] = []
        self.train_seconds = 0.0

    def on_step(self, m: StepMetrics) -> Verdict | None:
        means = self._recorder.close_step(m.step, m.advantages)
        fields = step_fields(m, means, self._sampling.sampler.mix(m.step))
        recorded = self.plan.steps[m.step]
        for name, value in fields.items():
            if name in CIRCUMSTANCE:
                continue
            mine, theirs = _json(value), _json(getattr(recorded, name))
            if mine != theirs:
                self.differences.append(
                    StepDifference(step=m.step, seq=recorded.seq, field=name, recorded=theirs, retrained=mine)
                )
        self.trained.append(m.step)
        self.train_seconds += m.sec_per_step
        same = not any(d.step == m.step for d in self.differences)
        print(
            f"  retrain: step {m.step} {'as recorded' if same else 'DIFFERS'} (loss {m.loss:+.6f})",
            file=sys.stderr,
            flush=True,
        )
        return None

    def on_checkpoint(self, step: int, staged_dir: Path) -> Verdict | None:
        shard = self._recorder.take_shard()
        if shard is not None:  # the archive's shard of these steps, as training publishes it with the checkpoint
            atomic_write_bytes(staged_dir / SHARD_NAME, shard)
        ref = self._recorded.get(step)
        if ref is not None:
            compared = compare_checkpoint(staged_dir, self.root / ref.dir, ref.files, ref.dir, step)
            self.compared.append(compared)
            print(
                f"  retrain: {ref.dir}: {len(compared.equal)} files equal"
                + (f", {len(compared.differing)} DIFFER" if compared.differing else ""),
                file=sys.stderr,
                flush=True,
            )
        shutil.rmtree(staged_dir, ignore_errors=True)
        if step >= self.plan.target.step:
            return Verdict(action="stop", rule="retrain", step=step, message=f"retrained to {self.plan.target.dir}")
        return None

    def close(self) -> None:
        pass

    def report(self, seconds: float, stopped: str | None = None) -> RetrainReport:
        plan = self.plan
        recorded = [plan.steps[s].sec_per_step for s in sorted(plan.steps)]
        report = RetrainReport(
            target=plan.target.dir,
            start=plan.start.dir if plan.start is not None else "base",
            steps=self.trained,
            exact=plan.exact,
            differences=self.differences,
            checkpoints=self.compared,
            seconds=seconds,
            train_seconds=self.train_seconds,
            recorded_sec_per_step=sum(recorded) / len(recorded),
        )
        (report.findings if plan.exact else report.notes).extend(_findings(plan, report, stopped))
        if plan.trained_again:
            report.notes.append(_trained_again(plan))
        return report


def _findings(plan: RetrainPlan, report: RetrainReport, stopped: str | None = None) -> list[Finding]:
    """What differs, the first step and the first tensor named: findings on an exact line, notes elsewhere."""
    found = []
    untrained = sorted(set(plan.steps) - set(report.steps))
    if untrained:
        why = f": {stopped}" if stopped else ""
        message = f"step {untrained[0]} was not retrained{why}"
        found.append(Finding(check="retrain", seq=plan.steps[untrained[0]].seq, message=message))
    if report.differences:
        first = report.differences[0]
        fields = sorted({d.field for d in report.differences if d.step == first.step})
        found.append(
            Finding(
                check="retrain",
                seq=first.seq,
                message=f"step {first.step} retrained from {report.start} differs from its train_step in "
                f"{', '.join(fields)} ({first.field}: recorded {first.recorded}, retrained {first.retrained}); "
                f"{len({d.step for d in report.differences})} of {len(report.steps)} steps differ",
            )
        )
    retrained = {c.dir for c in report.checkpoints}
    for ref in [*plan.between, plan.target]:
        if ref.dir not in retrained:
            found.append(Finding(check="retrain", seq=ref.seq, message=f"{ref.dir} was not staged again"))
    for compared in report.checkpoints:
        if compared.same:
            continue
        seq = next(ref.seq for ref in [*plan.between, plan.target] if ref.dir == compared.dir)
        found.append(Finding(check="retrain", seq=seq, message=_checkpoint_message(compared, report.start)))
    return found


def _trained_again(plan: RetrainPlan) -> Finding:
    """Steps the log holds more than once are compared with the last: say so, and how they were trained again."""
    steps = plan.trained_again
    span = f"steps {steps[0]}–{steps[-1]}" if len(steps) > 1 else f"step {steps[0]}"
    how = "; ".join(
        f"the segment at seq {seq} {'resumed exactly' if exact else 'did NOT resume exactly (exact_resume false)'}"
        for seq, exact in plan.again_by
    )
    return Finding(
        check="retrain",
        seq=plan.again_by[-1][0],
        message=f"{span} of this line were trained more than once (a kill or a rollback); compared with the log's "
        f"last train_step of each, the one that made {plan.target.dir}: {how}",
    )


def _checkpoint_message(compared: CheckpointComparison, start: str) -> str:
    files = ", ".join(d.file for d in compared.differing)
    first = next((d for d in compared.differing if d.tensors), compared.differing[0])
    if not first.tensors:
        why = "not written by the retrain" if first.retrained_sha256 is None else "its sha256 differs"
        return f"{compared.dir} retrained from {start}: {files} differ ({first.file}: {why})"
    tensor = first.tensors[0]
    largest = max(first.tensors, key=lambda t: t.max_abs if t.max_abs == t.max_abs else float("inf"))
    what = "entries" if first.file.endswith(".json") else "tensors"
    return (
        f"{compared.dir} retrained from {start}: {files} differ; {first.file}: {len(first.tensors)} of "
        f"{first.tensors_compared} {what}, the first {tensor.name} (max |Δ| {tensor.max_abs:.3g}, relative "
        f"{tensor.max_rel:.3g}), the largest {largest.name} (max |Δ| {largest.max_abs:.3g})"
    )


def _json(value) -> str:
    """A field as the log writes it (absent: an UNSET field, which the log leaves out)."""
    return "absent" if value is msgspec.UNSET else msgspec.json.encode(value, order="sorted").decode()
