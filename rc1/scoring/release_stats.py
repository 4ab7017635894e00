"""The statistics of the release verdict: did hard HotpotQA+StrategyQA success improve by at least the threshold?

A shadow set chooses the checkpoint (`select_checkpoint`, the rule best/ is promoted by); a separate gate
set of n held-out hard items measures it, so the choice's luck on the shadow items cannot pass the gate.
Each gate item's success is the mean of K sampled replies, for the step-0 policy and for the chosen one.
`paired_gain` takes the per-item differences d_i: gain = 100 · mean(d), with a 95 % percentile bootstrap
interval over items. The verdict passes when the gain reaches the threshold AND the interval lies above 0.

Percentile rather than BCa: on simulated gates (Beta-distributed item rates, K = 8, n = 20 to 400) both
missed on each side 2 to 4 % of the time against the nominal 2.5 %, but where most items are never solved
(mean success 0.03, n = 55) BCa's lower bound rose above the truth 4.5 % of the time, percentile's 2.8 %:
the jackknife acceleration is noisy on such sparse differences. BCa also fails outright (NaN, warnings)
when all differences are equal; that case gets its exact interval [d, d] here, whichever the method.

`release_power` sizes the gate before training, when the chosen policy's per-item rates are unknown.
Var(d_i) = Var(q̂_i) + Var(p̂_i) − 2 Cov(q̂_i, p̂_i), p̂ the base's sampled rate and q̂ the chosen one's.
The model assumes Cov ≥ 0 (training does not in bulk make the items it solved unsolvable) and drops it,
which can only overstate the spread. Var(p̂) is the sample variance (ddof = 1) of the base's per-item
sampled rates over the gate set. Var(q̂) is taken as the base's spread, but at least the pure sampling
variance at the shifted mean, q̄(1 − q̄)/K with q̄ = min(1, p̄ + threshold). So
    sd_diff² = Var(p̂) + max(Var(p̂), q̄(1 − q̄)/K),
    MDE = (z_{1−α/2} + z_power) · sd_diff / √n,   n_needed = ⌈((z_{1−α/2} + z_power) · sd_diff / threshold)²⌉.
For base rates Beta-distributed with mean 0.3 and a + b = 4, K = 8 and a 5 pp threshold: Var(p̂) ≈ 0.063,
sd_diff ≈ 0.355 and n_needed ≈ 396. The MDE speaks to the interval alone: a true gain equal to the
threshold shows an observed gain below it about half the time, so to pass with 80 % the true gain must
exceed the threshold by about z_power · sd_diff / √n (1.5 pp at n = 400).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import msgspec
import numpy as np

from rc1.run.verdicts import PairedGain, promotes

# scipy.stats is imported where it is used: it takes most of a second, which every CLI command would pay.


def paired_gain(
    baseline: Sequence[float], selected: Sequence[float], *, seed: int, confidence: float = 0.95, resamples: int = 9999
) -> PairedGain:
    """Same inputs and seed, same numbers: the resampling draws from a generator seeded here."""
    base, chosen = np.asarray(baseline, dtype=float), np.asarray(selected, dtype=float)
    if base.ndim != 1 or base.shape != chosen.shape:
        raise ValueError(
            f"baseline has {base.size} items and selected {chosen.size}: the gain is paired, so give "
            "both policies' success on the same gate items in the same order"
        )
    if base.size == 0:
        raise ValueError("no gate items: the gain needs at least one item evaluated on both policies")
    if not np.all((np.r_[base, chosen] >= 0) & (np.r_[base, chosen] <= 1)):
        raise ValueError("per-item success is a rate in [0, 1] (the mean over an item's sampled replies)")
    d = chosen - base
    if np.ptp(d) == 0:
        # Nothing varies to resample (one item, or every item moved alike): the interval is the value itself.
        gain = low = high = float(d[0])
    else:
        from scipy import stats

        gain = float(d.mean())
        ci = stats.bootstrap(
            (d,),
            np.mean,
            confidence_level=confidence,
            n_resamples=resamples,
            method="percentile",
            random_state=np.random.default_rng(seed),
            vectorized=True,
        ).confidence_interval
        low, high = float(ci.low), float(ci.high)
    return PairedGain(
        n=int(base.size),
        baseline=float(base.mean()),
        selected=float(chosen.mean()),
        gain_pp=100 * gain,
        ci_low_pp=100 * low,
        ci_high_pp=100 * high,
        confidence=confidence,
        resamples=resamples,
        seed=seed,
    )


class ReleasePower(msgspec.Struct, frozen=True, kw_only=True):
    n: int
    samples: int
    base_success: float
    sd_diff: float  # sd of the per-item difference the verdict will see (modelled, see the module docstring)
    mde_pp: float  # smallest true gain whose interval excludes 0 with the asked power
    threshold_pp: float
    n_needed: int  # the gate size at which mde_pp == threshold_pp
    passed: bool  # mde_pp <= threshold_pp


def release_power(
    base_rates: Sequence[float], samples: int, threshold_pp: float, *, power: float = 0.8, confidence: float = 0.95
) -> ReleasePower:
    """base_rates: the step-0 policy's sampled success per gate item (each the mean of `samples` replies)."""
    from scipy import stats

    rates = np.asarray(base_rates, dtype=float)
    if rates.ndim != 1 or rates.size < 2:
        raise ValueError(f"{rates.size} base rates: the spread of the gate set needs at least two items")
    if samples < 1 or threshold_pp <= 0:
        raise ValueError(f"samples {samples} and threshold {threshold_pp:g} pp: both must be positive")
    var_p = float(rates.var(ddof=1))
    shifted = min(1.0, float(rates.mean()) + threshold_pp / 100)
    sd_diff = math.sqrt(var_p + max(var_p, shifted * (1 - shifted) / samples))
    z = float(stats.norm.ppf(1 - (1 - confidence) / 2) + stats.norm.ppf(power))
    mde_pp = 100 * z * sd_diff / math.sqrt(rates.size)
    n_needed = max(1, math.ceil((100 * z * sd_diff / threshold_pp) ** 2))
    return ReleasePower(
        n=int(rates.size),
        samples=samples,
        base_success=float(rates.mean()),
        sd_diff=sd_diff,
        mde_pp=mde_pp,
        threshold_pp=threshold_pp,
        n_needed=n_needed,
        passed=mde_pp <= threshold_pp,
    )


def select_checkpoint(evaluations: Sequence[tuple[int, float]], final_step: int) -> tuple[int, str]:
    """The checkpoint the gate measures: the last one promoted to best/, else the final one. `evaluations`
    are (step, shadow metric) in step order, step 0 (the baseline, never selected) first. Only shadow
    values come in, so nothing measured on the gate set can sway the choice."""
    steps = [step for step, _ in evaluations]
    values = [float(value) for _, value in evaluations]
    if not steps or steps[0] != 0:
        raise ValueError("the evaluations start with step 0: the baseline every checkpoint must beat")
    if any(b <= a for a, b in zip(steps, steps[1:])) or final_step < steps[-1]:
        raise ValueError(
            f"evaluations at steps {steps} with the final checkpoint at {final_step}: give one per step, "
            "in step order, none after the final checkpoint"
        )
    if not all(math.isfinite(v) for v in values):
        raise ValueError("a shadow metric is not a finite number: a NaN would block every later promotion")
    best = None
    for i in range(1, len(values)):
        if promotes(values[i], values[:i]):
            best = steps[i]
    return (best, "best") if best is not None else (final_step, "final")
