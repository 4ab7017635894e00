"""The shadow run's statistics: does the new scoring rank replies as the old one did, and does it track
success better? Rank statistics from scipy.stats; pure (scores in, numbers out).

Per sampled reply: the old score, the new score and success (correctness). Items whose new score varies
more than `unstable_variance` across their samples are listed and left out. Over the rest:
- `spearman`, `kendall_tau`: rank agreement of old and new scores over all replies;
- `top10_overlap`, `top20_overlap`: share of the k best items (by mean score) that old and new agree on;
- `corr_to_success_old`, `corr_to_success_new`: Pearson correlation of each score with success;
- `corr_improve_pct`: how much closer the new score tracks success, in percent of the old correlation.
A statistic that is undefined (constant input, too few items) is None.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import msgspec
import numpy as np


class Sample(msgspec.Struct, frozen=True):
    item_id: str
    difficulty: str
    old: float
    new: float
    success: float


class ShadowStats(msgspec.Struct, frozen=True, kw_only=True):
    statistics: dict[str, float | None]
    by_difficulty: dict[str, dict[str, float | None]]
    unstable: list[str]


def shadow_statistics(samples: Sequence[Sample], unstable_variance: float) -> ShadowStats:
    by_item: dict[str, list[Sample]] = {}
    for s in samples:
        by_item.setdefault(s.item_id, []).append(s)
    unstable = sorted(i for i, group in by_item.items() if np.var([s.new for s in group]) > unstable_variance)
    stable = [s for s in samples if s.item_id not in set(unstable)]
    split = {d: _stats([s for s in stable if s.difficulty == d]) for d in sorted({s.difficulty for s in stable})}
    overall = _stats(stable)
    overall["items"], overall["unstable_items"] = float(len(by_item)), float(len(unstable))
    return ShadowStats(statistics=overall, by_difficulty=split, unstable=unstable)


def _stats(samples: list[Sample]) -> dict[str, float | None]:
    from scipy import stats

    old = np.array([s.old for s in samples])
    new = np.array([s.new for s in samples])
    success = np.array([s.success for s in samples])
    corr_old, corr_new = _defined(stats.pearsonr, old, success), _defined(stats.pearsonr, new, success)
    improve = None
    if corr_old is not None and corr_new is not None and corr_old != 0:
        improve = 100.0 * (corr_new - corr_old) / abs(corr_old)
    means = {}
    for s in samples:
        means.setdefault(s.item_id, []).append((s.old, s.new))
    items = sorted(means)
    mean_old = {i: float(np.mean([o for o, _ in means[i]])) for i in items}
    mean_new = {i: float(np.mean([n for _, n in means[i]])) for i in items}
    return {
        "replies": float(len(samples)),
        "spearman": _defined(stats.spearmanr, old, new),
        "kendall_tau": _defined(stats.kendalltau, old, new),
        "top10_overlap": _top_overlap(mean_old, mean_new, 10),
        "top20_overlap": _top_overlap(mean_old, mean_new, 20),
        "corr_to_success_old": corr_old,
        "corr_to_success_new": corr_new,
        "corr_improve_pct": improve,
        "mean_old": float(old.mean()) if len(old) else None,
        "mean_new": float(new.mean()) if len(new) else None,
        "success": float(success.mean()) if len(success) else None,
    }


def _defined(test, x: np.ndarray, y: np.ndarray) -> float | None:
    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    value = float(test(x, y)[0])
    return value if math.isfinite(value) else None


def _top_overlap(old: dict[str, float], new: dict[str, float], k: int) -> float | None:
    if len(old) < k:
        return None
    # Ties broken by item id, so the overlap is deterministic.
    top_old = {i for i, _ in sorted(old.items(), key=lambda kv: (-kv[1], kv[0]))[:k]}
    top_new = {i for i, _ in sorted(new.items(), key=lambda kv: (-kv[1], kv[0]))[:k]}
    return len(top_old & top_new) / k
