"""The rules that decide, as pure functions the aggregate applies (rc1/run/aggregate.py): a round passes when every
check it recorded passed; best/ is promoted on a shadow metric that beats every evaluation before it; a line's
release passes when its paired gain on the gate set reaches the threshold and its interval lies above 0; a run of
several seeds passes when the mean gain minus its spread reaches the threshold and every seed passed. The numbers
come from the stages (the bootstrap is rc1/scoring/release_stats.py); the decision is taken here, from the log.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

import msgspec

from rc1.core.errors import TrainingError
from rc1.run import events as ev
from rc1.run.events import EvalBucket

ALL = "all"


class PairedGain(msgspec.Struct, frozen=True, kw_only=True):
    n: int
    baseline: float  # mean per-item success of the step-0 policy, 0..1
    selected: float  # of the checkpoint the shadow set chose, 0..1
    gain_pp: float  # 100 · mean(selected − baseline)
    ci_low_pp: float
    ci_high_pp: float
    confidence: float
    resamples: int
    seed: int


class Verdict(msgspec.Struct, frozen=True, kw_only=True):
    passed: bool
    failed: list[str]  # one plain sentence per part of the rule that failed, [] when passed


def release_verdict(gain: PairedGain, threshold_pp: float) -> Verdict:
    failed = []
    if gain.gain_pp < threshold_pp - 1e-9:  # equal to the threshold passes, whatever the float rounding of the mean
        failed.append(f"the gain {_pp(gain.gain_pp, threshold_pp)} pp is below the threshold {threshold_pp:g} pp")
    if not gain.ci_low_pp > 0:
        failed.append(
            f"the {100 * gain.confidence:g} % interval [{_pp(gain.ci_low_pp, 0.0)}, {_pp(gain.ci_high_pp, 0.0)}]"
            " pp does not lie above 0"
        )
    return Verdict(passed=not failed, failed=failed)


def _pp(value: float, bound: float) -> str:
    """One decimal, more where one would round the value onto the bound it failed against (+5.0 below 5)."""
    digits = 1
    while digits < 3 and value != bound and round(value, digits) == bound:
        digits += 1
    return f"{value:+.{digits}f}"


def promotes(value: float, earlier: Sequence[float]) -> bool:
    """A checkpoint goes to best/ when its shadow metric strictly beats every evaluation before it, step 0
    included: a tie keeps the older checkpoint. With nothing before it, it trivially does."""
    return all(value > e for e in earlier)


def metric_value(metric: str, hard: float | None, hard_sampled: float | None, buckets: Sequence[EvalBucket]) -> float:
    """The value of `release.metric` for one evaluation (0 where it was not measured)."""
    if metric == "hard_success":
        return hard or 0.0
    if metric == "hard_sampled_success":
        return hard_sampled or 0.0
    overall = next(b for b in buckets if b.task == ALL and b.difficulty == ALL)
    if metric == "sampled_success":
        return overall.sampled_success or 0.0
    return overall.success if metric == "success" else overall.mean_reward


class AcrossSeeds(msgspec.Struct, frozen=True, kw_only=True):
    gains_pp: dict[str, float]
    mean_pp: float
    spread_pp: float
    passed: bool


def across_seeds(gains_pp: dict[str, float], passed: Sequence[bool], threshold_pp: float) -> AcrossSeeds:
    """Mean gain minus its spread (sample standard deviation over seeds) must reach the threshold, and every line
    must have passed its own verdict (gain and interval)."""
    mean = statistics.fmean(gains_pp.values())
    spread = statistics.stdev(gains_pp.values()) if len(gains_pp) > 1 else 0.0
    return AcrossSeeds(
        gains_pp=dict(gains_pp), mean_pp=mean, spread_pp=spread, passed=mean - spread >= threshold_pp and all(passed)
    )


def require_same_items(base: ev.GateSetEvaluated, selected: ev.GateSetEvaluated) -> None:
    """A paired gain compares the same gate items, sampled as often, under both policies."""
    if (base.gate_sha256, base.item_ids, base.samples) != (selected.gate_sha256, selected.item_ids, selected.samples):
        raise TrainingError(
            "the gate set's two evaluations are not of the same items and samples (the gate set "
            "changed after round 2?); re-run the rounds (`rc1 advance` from INIT) to evaluate the "
            "step-0 policy on the gate set in force"
        )


def gate_verdict(
    base: ev.GateSetEvaluated, selected: ev.GateSetEvaluated, gain: PairedGain, threshold_pp: float
) -> Verdict:
    """The release rule held to a line's two gate-set evaluations (the same items) and the paired gain measured on
    them; RunAggregate.verdict_event records it."""
    require_same_items(base, selected)
    if gain.n != len(base.item_ids):
        raise TrainingError(f"the gain is over {gain.n} items, the gate set's evaluations over {len(base.item_ids)}")
    return release_verdict(gain, threshold_pp)
