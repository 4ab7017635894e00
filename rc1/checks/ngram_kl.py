"""3-gram KL: how far apart the episode framings of a pool are, in the words the pool repeats.

Definition. Take a set S of items (one task's, or the whole pool) and group them by framing
g = (template, role, style). Count word 3-grams of the prompts (lowercased `tokens`), keeping only the
3-grams that occur at least twice in S — the text's recurring shape; a 3-gram of one-off names says
nothing about framing and would make any split look diverse. With c_g(x) the count of 3-gram x in
group g, N_g = Σ_x c_g(x), V the number of kept 3-grams and α = 0.5:

    P_g(x) = (c_g(x) + α) / (N_g + α·V)        (each group, add-α smoothed)
    M(x)   = (Σ_g c_g(x) + α) / (Σ_g N_g + α·V) (the whole set, smoothed the same way)
    KL_3(S) = Σ_g (N_g / Σ_h N_h) · D_KL(P_g ‖ M)   in nats

It is 0 when every framing produces the same recurring text (one template in disguise, or one
framing only), and grows as framings say different things. Deterministic: no sampling, fixed α.
Cost O(kept 3-grams): the terms of 3-grams a group lacks are summed in closed form.
"""

from __future__ import annotations

import numpy as np

from rc1.checks.result import CheckResult
from rc1.checks.text import ngram_keys, tokens
from rc1.data.task import TaskItem

ALPHA = 0.5
MIN_COUNT = 2


def framing(item: TaskItem) -> str:
    return f"{item.template}|{item.role}|{item.style}"


def kl3(items: list[TaskItem]) -> float:
    if not items:
        return 0.0
    keys, owner = ngram_keys([tokens(item.prompt.lower()) for item in items], 3)
    if not keys.size:
        return 0.0
    labels = sorted({framing(item) for item in items})
    group_of_item = np.array([labels.index(framing(item)) for item in items], dtype=np.int64)
    groups = group_of_item[owner]
    vocab, inverse, totals = np.unique(keys, return_inverse=True, return_counts=True)
    kept = totals >= MIN_COUNT
    if not kept.any():
        return 0.0
    remap = np.cumsum(kept) - 1
    mask = kept[inverse]
    x, g = remap[inverse[mask]], groups[mask]
    v = int(kept.sum())
    overall = np.bincount(x, minlength=v).astype(np.float64)
    m = (overall + ALPHA) / (overall.sum() + ALPHA * v)
    log_m = np.log(m)
    sum_log_m = log_m.sum()
    pair = g * v + x
    pairs, counts = np.unique(pair, return_counts=True)
    pair_group, pair_x = pairs // v, pairs % v
    n_g = np.bincount(pair_group, weights=counts, minlength=len(labels))
    bounds = np.searchsorted(pair_group, np.arange(len(labels) + 1))  # pairs are sorted, so by group
    result = 0.0
    for group in range(len(labels)):
        if n_g[group] == 0:
            continue
        xs, cs = pair_x[bounds[group]:bounds[group + 1]], counts[bounds[group]:bounds[group + 1]].astype(np.float64)
        denominator = n_g[group] + ALPHA * v
        p_seen = (cs + ALPHA) / denominator
        p_unseen = ALPHA / denominator
        seen = np.sum(p_seen * (np.log(p_seen) - log_m[xs]))
        unseen = p_unseen * ((v - xs.size) * np.log(p_unseen) - (sum_log_m - log_m[xs].sum()))
        result += (n_g[group] / n_g.sum()) * (seen + unseen)
    return float(result)


def ngram_kl(items: list[TaskItem], threshold: float) -> CheckResult:
    tasks = sorted({item.task for item in items})
    measured = {task: kl3([i for i in items if i.task == task]) for task in tasks}
    measured["overall"] = kl3(items)
    low = {k: v for k, v in measured.items() if v < threshold}
    detail = (
        "no items to measure" if not items else
        f"3-gram KL below {threshold:g}: " + ", ".join(f"{k} {v:.3f}" for k, v in low.items()) if low else
        f"3-gram KL across framings overall {measured['overall']:.3f}, every task at least {threshold:g}"
    )
    return CheckResult(name="ngram_kl", passed=bool(items) and not low, measured=measured,
                       thresholds={"min": threshold, "alpha": ALPHA, "min_count": float(MIN_COUNT)}, detail=detail)
