"""The projection: what replay folds a run's events into (rc1/run/replay.py), the state every command reads and a
snapshot keeps. Plain data, no behaviour but a derived property or two."""

from __future__ import annotations

import msgspec

from rc1.run import events as ev
from rc1.run.monitors.sections import WatchedRules
from rc1.run.monitors.state import MonitorState


class CheckpointRef(msgspec.Struct, frozen=True, kw_only=True):
    step: int
    dir: str
    files: dict[str, str]
    seq: int


class GateView(msgspec.Struct, kw_only=True):
    passed: bool = False
    fingerprints: ev.Fingerprints | None = None
    seq: int | None = None
    failures: list[str] = msgspec.field(default_factory=list)


class StepView(msgspec.Struct, frozen=True, kw_only=True):
    step: int
    loss: float
    kl: float
    reward: float
    lr: float
    seq: int
    sec_per_step: float = 0.0


class EvalPoint(msgspec.Struct, frozen=True, kw_only=True):
    step: int
    hard_success: float | None
    success: float
    mean_reward: float
    buckets: list[ev.EvalBucket]
    hard_sampled_success: float | None = None


class ReleaseView(msgspec.Struct, frozen=True, kw_only=True):
    """A line of training's release verdict (docs/release-verdict.md)."""

    passed: bool
    hard_gain_pp: float
    threshold: float
    step: int | None  # the selected checkpoint
    ci_low_pp: float | None = None  # the paired 95 % interval of the gain (None: a v2 verdict, which had none)
    ci_high_pp: float | None = None
    n: int = 0  # gate items
    samples: int = 0  # sampled replies per item
    baseline_success: float = 0.0
    selected_success: float = 0.0
    selected_by: str = ""  # best | final
    failed: list[str] = msgspec.field(default_factory=list)
    release: bool = True  # False: a smoke run's verdict, not a release


class LineResult(msgspec.Struct, frozen=True, kw_only=True):
    """A finished line of training (one seed of `run.seeds`)."""

    seed: int
    step: int
    best_step: int | None
    final_checkpoint: str
    release: ReleaseView | None


class AcrossSeedsView(msgspec.Struct, frozen=True, kw_only=True):
    gains_pp: dict[str, float]
    mean_pp: float
    spread_pp: float
    threshold_pp: float
    passed: bool
    release: bool = True


class ExportRef(msgspec.Struct, frozen=True, kw_only=True):
    """A model `rc1 export` wrote (model_exported): where, in what form, from which checkpoint of which line."""

    seq: int
    out: str
    form: str  # adapter | merged | full
    step: int
    seed: int | None


class HaltView(msgspec.Struct, frozen=True, kw_only=True):
    """The halt the run is in (state HALTED): the rule that tripped, where, and what it measured."""

    rule: str
    step: int
    seed: int | None
    measured: dict[str, float]
    threshold: dict[str, float]
    detail: str
    seq: int


class AmendmentView(msgspec.Struct, frozen=True, kw_only=True):
    value: float | None
    seq: int  # the training_amended that set it: a checkpoint saved before it still holds the old value


class Violation(msgspec.Struct, frozen=True, kw_only=True):
    seq: int
    message: str


class Projection(msgspec.Struct, kw_only=True):
    run: str = ""
    state: str = "INIT"
    events: int = 0
    head_seq: int = -1
    last_ts: str = ""
    config_sha256: str | None = None
    kept_config: str | None = None  # the sha256 of the config the run keeps (run_started.keeps), None before any
    step: int = 0
    max_steps: int | None = None
    complete: bool = False
    training_segments: int = 0
    segment_first_step: int | None = None  # the step the current segment resumed from (0 = fresh)
    checkpoints: list[CheckpointRef] = msgspec.field(default_factory=list)
    gates: dict[str, GateView] = msgspec.field(default_factory=lambda: {"round1": GateView(), "round2": GateView()})
    last_step: StepView | None = None
    last_eval: dict[str, float] | None = None
    evals: list[EvalPoint] = msgspec.field(default_factory=list)  # of the current line of training
    release: ReleaseView | None = None
    # The gate set's evaluations: the step-0 policy's (round 2, shared by every line of training) and the selected
    # checkpoint's of the current line; the verdict is computed from the two.
    gate_base: ev.GateSetEvaluated | None = None
    gate_selected: ev.GateSetEvaluated | None = None
    best_step: int | None = None
    best_value: float | None = None  # the shadow set's `best_metric` at best_step (None after a rollback past it)
    best_metric: str = ""  # the metric that chose best/ (best_promoted.metric)
    last_error: str | None = None
    checks: dict[str, bool] = msgspec.field(default_factory=dict)  # "r1.distinct2" -> passed, latest
    violations: list[Violation] = msgspec.field(default_factory=list)
    set_aside: list[Violation] = msgspec.field(default_factory=list)  # refused events `rc1 repair` set aside
    trackers: dict[str, str] = msgspec.field(default_factory=dict)  # tracking backend -> its run id
    # `run.seeds`: the line of training the fields above describe, every seed the run trains, the lines
    # finished so far, and the verdict across them (when the run trains more than one seed).
    seed: int | None = None
    seeds: list[int] = msgspec.field(default_factory=list)
    finished: list[LineResult] = msgspec.field(default_factory=list)
    across_seeds: AcrossSeedsView | None = None
    exports: list[ExportRef] = msgspec.field(default_factory=list)  # every model_exported, oldest first
    # Monitors: the rules the line in training is watched with (its training_started), their fold, the halt the run
    # is in, and the training keys amended on the way out of halts (dotted key -> value, for the rest of the run).
    watched: WatchedRules | None = None
    monitor: MonitorState = msgspec.field(default_factory=MonitorState)
    halt: HaltView | None = None
    amendments: dict[str, AmendmentView] = msgspec.field(default_factory=dict)
    # The step a halt's way forward resumes from (a checkpoint's; 0: the line starts over), until training resumes.
    resume_step: int | None = None
    promotions: list[int] = msgspec.field(default_factory=list)  # the line's best/ promotions (steps), oldest first
    # The line's first record of its frozen base (training_started.frozen_sha256): what the frozen_base guard compares
    # every later record with; {} for a line without one.
    frozen_base: dict[str, str] = msgspec.field(default_factory=dict)

    @property
    def latest_checkpoint(self) -> CheckpointRef | None:
        """The newest checkpoint the log vouches for, at or below the current step of training."""
        return self.checkpoints[-1] if self.checkpoints else None
