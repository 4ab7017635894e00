"""What the monitors keep of a line of training: its recent steps, its evaluations, the steps since the last one, and
each rule's latest reading. Plain data, part of the replayed projection (and so of its snapshot)."""

from __future__ import annotations

import msgspec

from rc1.run.monitors.spend import Spend
from rc1.run.monitors.stats import Interval, Trend


class StepPoint(msgspec.Struct, frozen=True, kw_only=True, gc=False, array_like=True):
    """What the step rules read off one train_step: the numbers the watched rules declare (their SignalPath.path -> the
    value; a number the engine does not record is absent), and the step's own spend, whose largest over its window
    the budget reads (an evaluation's is the state's last_eval_spend)."""

    step: int
    values: dict[str, float]
    judge_calls: int
    judge_tokens: int
    judge_cost_usd: float
    wall_seconds: float  # the step's own time (train_step.sec_per_step)


class StepsBetween(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A stretch of train_steps as reward hacking reads it: the trend over steps of the reward, of the correctness
    component, and of each component's share of the weighted reward."""

    reward: Trend = msgspec.field(default_factory=Trend)
    correctness: Trend = msgspec.field(default_factory=Trend)
    shares: dict[str, Trend] = msgspec.field(default_factory=dict)

    def add(self, step: int, reward: float, correctness: float | None, shares: dict[str, float]) -> StepsBetween:
        """With one more step: its reward, its correctness component (None: the weights have none) and each
        component's share of its weighted reward."""
        trends = dict(self.shares)
        for name, share in shares.items():
            trends[name] = trends.get(name, Trend()).add(step, share)
        grown = self.correctness if correctness is None else self.correctness.add(step, correctness)
        return StepsBetween(reward=self.reward.add(step, reward), correctness=grown, shares=trends)

    def plus(self, other: StepsBetween) -> StepsBetween:
        return StepsBetween(
            reward=self.reward.plus(other.reward),
            correctness=self.correctness.plus(other.correctness),
            shares={
                name: self.shares.get(name, Trend()).plus(other.shares.get(name, Trend()))
                for name in self.shares.keys() | other.shares.keys()
            },
        )


class Drift(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """KL of the policy to the step-0 policy, per token (k3 estimator), averaged per item over the evaluation's
    sampled replies, with the interval over items."""

    kl: float
    low: float
    high: float
    items: int
    tokens: int
    seconds: float = 0.0  # what measuring it took (the cost of watching, make bench)


class ShadowReadout(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """One shadow evaluation as the evaluation rules read it: per item (the shadow set's order), greedy success
    (1 or 0, or a share where a check by function gives one) and the sampled replies scored correct (of `samples`)."""

    step: int
    greedy: list[float]
    sampled: list[int]
    samples: int
    drift: Drift | None
    since_previous: StepsBetween = msgspec.field(default_factory=StepsBetween)  # the steps since the evaluation before

    @property
    def greedy_rates(self) -> list[float]:
        return [float(g) for g in self.greedy]

    @property
    def sampled_rates(self) -> list[float]:
        return [s / self.samples for s in self.sampled] if self.samples else []


class Reading(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A rule's verdict at one check: its value against its threshold, whether it breaches, and what a trip would
    record (measured values and thresholds, by name) with a sentence saying it."""

    step: int
    value: float | None
    threshold: float
    breach: bool
    measured: dict[str, float] = msgspec.field(default_factory=dict)
    thresholds: dict[str, float] = msgspec.field(default_factory=dict)
    window: int = 1
    detail: str = ""
    interval: Interval | None = None
    not_finite: dict[str, str] = msgspec.field(default_factory=dict)  # measured values that were not finite, as text


class TripRef(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    rule: str
    step: int
    action: str
    seq: int
    reason: str = ""  # a person's, when they chose to stop the line at a halt


class Watch(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """The part of a line's monitoring that a resume rewinds: as it stood at a checkpoint, it is restored when training
    resumes from that checkpoint (so a resumed line trips where the uninterrupted one did)."""

    steps: tuple[StepPoint, ...] = ()  # the most recent, as many as the longest step window needs
    since_eval: StepsBetween = msgspec.field(default_factory=StepsBetween)  # the steps since the last evaluation
    quiet: dict[str, int] = msgspec.field(default_factory=dict)  # rule -> the step of its trip: quiet until it clears
    readings: dict[str, Reading] = msgspec.field(default_factory=dict)


class Clock(msgspec.Struct, kw_only=True, gc=False):
    """The training session in progress: when its last event was written, and the accelerators it holds."""

    running: bool = False
    last_us: int = 0  # microseconds since the epoch
    accelerators: int = 0


class MonitorState(msgspec.Struct, kw_only=True):
    """The monitors' fold over a run: the line in training (its step, what a resume rewinds, its evaluations, its
    trips), the watches saved at its checkpoints, and what the line and the run have spent."""

    seed: int | None = None
    step: int = 0
    max_steps: int = 0  # of the line: a rule may leave its last check alone (a stop there changes nothing)
    weights: dict[str, float] = msgspec.field(default_factory=dict)  # the reward's weights (component shares)
    thinking: bool = False  # the line's policy thinks (training_started.thinking): its greedy replies decide nothing
    watch: Watch = msgspec.field(default_factory=Watch)
    saved: dict[int, Watch] = msgspec.field(default_factory=dict)  # checkpoint step -> the watch as it stood there
    evals: list[ShadowReadout] = msgspec.field(default_factory=list)  # of the line, up to the current step
    silenced: dict[str, int] = msgspec.field(default_factory=dict)  # rule -> the trip a person chose to go past
    trips: list[TripRef] = msgspec.field(default_factory=list)  # of the line, up to the current step
    stopping: TripRef | None = None  # a `stop` trip whose line has not completed yet
    line_spend: Spend = msgspec.field(default_factory=Spend)
    run_spend: Spend = msgspec.field(default_factory=Spend)
    last_eval_spend: Spend = msgspec.field(default_factory=Spend)  # the latest evaluation's own
    clock: Clock = msgspec.field(default_factory=Clock)
    checked: tuple[str, ...] = ()  # the rules read at the last check (a train_step or an eval_completed)
