"""The intervals a monitor decides on: a paired mean difference over items, and a difference of two means (Welch).

Both are t-intervals: cheap enough to compute at every evaluation of a 50,000-step run during replay, and on the
shadow set's 245 items (60 in the embedded default) the t-interval's coverage is what the percentile bootstrap of the
release verdict would give (tests/unit/test_monitor_stats.py holds it to scipy and to a simulation). scipy is imported
when an interval is first asked for, so a replay without evaluations (`rc1 status` on a snapshot) does not load it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

import msgspec


class Interval(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A mean (or a difference of means) with its two-sided interval at `confidence` over `n` units."""

    mean: float
    low: float
    high: float
    n: int
    confidence: float


@lru_cache(maxsize=4096)
def _t_quantile(confidence: float, df: float) -> float:
    from scipy.stats import t

    return float(t.ppf(0.5 + confidence / 2, df))


def mean_interval(values: Sequence[float], confidence: float) -> Interval | None:
    """The mean of `values` with its t-interval (paired differences: the values are the per-item differences).
    None with fewer than two values; an interval of width 0 when every value is equal."""
    n = len(values)
    if n < 2:
        return None
    mean = math.fsum(values) / n
    variance = math.fsum((v - mean) ** 2 for v in values) / (n - 1)
    half = _t_quantile(confidence, n - 1) * math.sqrt(variance / n) if variance > 0 else 0.0
    return Interval(mean=mean, low=mean - half, high=mean + half, n=n, confidence=confidence)


def paired_interval(after: Sequence[float], before: Sequence[float], confidence: float) -> Interval | None:
    """after − before, item by item (the same items in the same order), with the interval of the mean difference."""
    if len(after) != len(before):
        raise ValueError(f"paired samples of different sizes: {len(after)} and {len(before)}")
    return mean_interval([a - b for a, b in zip(after, before, strict=True)], confidence)


class Moments(msgspec.Struct, frozen=True, kw_only=True, gc=False, array_like=True):
    """n, Σx and Σx² of a series: enough for its mean and variance, folded one value at a time."""

    n: int = 0
    total: float = 0.0
    squares: float = 0.0

    def add(self, value: float) -> Moments:
        return Moments(n=self.n + 1, total=self.total + value, squares=self.squares + value * value)

    @property
    def mean(self) -> float:
        return self.total / self.n if self.n else math.nan

    @property
    def variance(self) -> float:
        if self.n < 2:
            return math.nan
        return max(0.0, (self.squares - self.total * self.total / self.n) / (self.n - 1))


def welch_interval(after: Moments, before: Moments, confidence: float) -> Interval | None:
    """mean(after) − mean(before) with Welch's t-interval (unequal variances); None with fewer than two values on
    either side."""
    if after.n < 2 or before.n < 2:
        return None
    va, vb = after.variance / after.n, before.variance / before.n
    diff = after.mean - before.mean
    se = math.sqrt(va + vb)
    if se == 0:
        return Interval(mean=diff, low=diff, high=diff, n=after.n + before.n, confidence=confidence)
    df = (va + vb) ** 2 / (va * va / (after.n - 1) + vb * vb / (before.n - 1))
    half = _t_quantile(confidence, df) * se
    return Interval(mean=diff, low=diff - half, high=diff + half, n=after.n + before.n, confidence=confidence)


class Trend(msgspec.Struct, frozen=True, kw_only=True, gc=False, array_like=True):
    """A series y over steps x, as the sums a least-squares line needs, folded one point at a time and added
    stretch to stretch."""

    n: int = 0
    sx: float = 0.0
    sxx: float = 0.0
    sy: float = 0.0
    syy: float = 0.0
    sxy: float = 0.0

    def add(self, x: float, y: float) -> Trend:
        return Trend(
            n=self.n + 1,
            sx=self.sx + x,
            sxx=self.sxx + x * x,
            sy=self.sy + y,
            syy=self.syy + y * y,
            sxy=self.sxy + x * y,
        )

    def plus(self, other: Trend) -> Trend:
        return Trend(
            n=self.n + other.n,
            sx=self.sx + other.sx,
            sxx=self.sxx + other.sxx,
            sy=self.sy + other.sy,
            syy=self.syy + other.syy,
            sxy=self.sxy + other.sxy,
        )

    def slope(self, confidence: float) -> Interval | None:
        """The least-squares slope (per step) with its t-interval (n − 2 degrees of freedom); None with fewer than
        three points or no spread in x."""
        if self.n < 3:
            return None
        cxx = self.sxx - self.sx * self.sx / self.n
        if cxx <= 0:
            return None
        cxy = self.sxy - self.sx * self.sy / self.n
        cyy = self.syy - self.sy * self.sy / self.n
        slope = cxy / cxx
        residual = max(0.0, cyy - slope * cxy) / (self.n - 2)
        half = _t_quantile(confidence, self.n - 2) * math.sqrt(residual / cxx) if residual > 0 else 0.0
        return Interval(mean=slope, low=slope - half, high=slope + half, n=self.n, confidence=confidence)
