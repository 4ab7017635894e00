"""3-gram KL: how much the episode framings of a pool change its text, in the words the pool repeats.

Definition. Take a set S of items (one task's, or the whole pool). Count the word 3-grams of the
prompts (lowercased `tokens`), keeping only the 3-grams that occur at least max(2, ⌈0.02·|S|⌉) times
in S: the text's recurring shape. A 3-gram of one-off names says nothing about framing, and keeping
the rare ones would let sampling noise pass for diversity.

For one framing dimension d (the template, the role or the style) group the items of S by their
value of d. With c_g(x) the count of kept 3-gram x in group g, N_g = Σ_x c_g(x), V the number of kept
3-grams and α = 0.5:

    P_g(x) = (c_g(x) + α) / (N_g + α·V)         (each group, add-α smoothed)
    M(x)   = (Σ_g c_g(x) + α) / (Σ_g N_g + α·V)  (all of S, smoothed the same way)
    KL_d(S) = Σ_g (N_g / Σ_h N_h) · D_KL(P_g ‖ M)   in nats

A plug-in KL is biased upwards on small groups: labels that have nothing to do with the text still
score above 0. So each term is corrected by its chance level, measured on the same text: the mean of
KL_d over 3 shuffles of d's labels among the items of S (Python's seeded `random.Random`, the same in
every process), and floored at 0:

    KL_3(S) = Σ_d max(0, KL_d(S) − mean_r KL_d(S, labels shuffled by r))

Summing over the dimensions estimates the information the whole framing carries about the text when
the three are dealt independently, as `rc1.data.episodes` deals them; grouping by whole framings
instead would leave a couple of items per group in a small pool, all noise. KL_3 is 0 when the
framings produce the same recurring text (one template in disguise, a single framing, or labels put
on text they did not shape) and grows as they say different things.

S is always one task's items: a set of several tasks gets the mean of its tasks' values, weighted by
their item counts (and so does each term), because across tasks the text differs by task whatever
the framing, and that difference is not the framings' doing.
Deterministic; cost O(3-grams) for the counting, then O(kept occurrences + groups × V) for each of
the 12 labellings per task (3 dimensions × the observed labels and 3 shuffles).
"""

from __future__ import annotations

import math
import random

import numpy as np

from rc1.checks.result import CheckResult
from rc1.checks.spec import Check, Floor
from rc1.core.runbook import Runbook
from rc1.data.task import TaskItem
from rc1.data.text import ngram_keys, tokens

ALPHA = 0.5
MIN_COUNT = 2
MIN_SHARE = 0.02  # a kept 3-gram occurs at least max(MIN_COUNT, ⌈MIN_SHARE·|S|⌉) times in S
SHUFFLES = 3
DIMENSIONS = ("template", "role", "style")


def kl3(items: list[TaskItem]) -> float:
    """KL_3 of a set of items (see the module's definition)."""
    return ngram_kl(items, 0.0).measured.get("overall", 0.0)


def ngram_kl(items: list[TaskItem], threshold: float) -> CheckResult:
    """KL_3 per task and overall (`gsm8k`, ..., `overall`), each with its per-dimension terms
    (`gsm8k.template`, ...); the check passes when every task's and the overall KL_3 reach `threshold`."""
    keys, owner = _keyed(items)
    task_of_item = np.array([item.task for item in items])
    tasks = sorted(set(task_of_item.tolist()))
    measured: dict[str, float] = {}
    overall = {dimension: 0.0 for dimension in DIMENSIONS}
    for task in tasks:
        members = np.flatnonzero(task_of_item == task)
        terms = _task_terms(items, keys, owner, members)
        measured[task] = sum(terms.values())
        for dimension, value in terms.items():
            measured[f"{task}.{dimension}"] = value
            overall[dimension] += value * members.size / len(items)
    if items:
        measured["overall"] = sum(overall.values())
        measured.update({f"overall.{dimension}": value for dimension, value in overall.items()})
    scopes = tasks + ["overall"] if items else []
    low = {scope: measured[scope] for scope in scopes if measured[scope] < threshold}
    detail = (
        "no items to measure"
        if not items
        else f"3-gram KL below {threshold:g}: " + ", ".join(f"{k} {v:.3f}" for k, v in low.items())
        if low
        else f"3-gram KL across framings overall {measured['overall']:.3f}, every task at least {threshold:g}"
    )
    return CheckResult(
        name="ngram_kl",
        passed=bool(items) and not low,
        measured=measured,
        thresholds={"min": threshold, "alpha": ALPHA, "min_share": MIN_SHARE, "shuffles": float(SHUFFLES)},
        detail=detail,
    )


def _keyed(items: list[TaskItem]) -> tuple[np.ndarray, np.ndarray]:
    return ngram_keys([tokens(item.prompt.lower()) for item in items], 3)


def _task_terms(items: list[TaskItem], keys: np.ndarray, owner: np.ndarray, members: np.ndarray) -> dict[str, float]:
    """The chance-corrected KL_d of one task's items `members` (indices into `items`), for each dimension d."""
    terms = {dimension: 0.0 for dimension in DIMENSIONS}
    if not members.size:
        return terms
    in_task = np.zeros(len(items), dtype=bool)
    in_task[members] = True
    mine = in_task[owner]
    task_keys, task_owner = keys[mine], owner[mine]
    if not task_keys.size:
        return terms
    _, inverse, totals = np.unique(task_keys, return_inverse=True, return_counts=True)
    kept = totals >= max(MIN_COUNT, math.ceil(MIN_SHARE * members.size - 1e-9))
    if not kept.any():
        return terms
    x = (np.cumsum(kept) - 1)[inverse][kept[inverse]]  # each kept occurrence's 3-gram number
    position = np.zeros(len(items), dtype=np.int64)
    position[members] = np.arange(members.size)
    item_of_x = position[task_owner[kept[inverse]]]  # each kept occurrence's item, numbered within the task
    v = int(kept.sum())
    for dimension in DIMENSIONS:
        labels = [getattr(items[i], dimension) for i in members.tolist()]
        observed = _kl_of_labelling(labels, item_of_x, x, v)
        chance = 0.0
        for shuffle in range(SHUFFLES):
            shuffled = list(labels)
            random.Random(f"rc1-ngram-kl|{dimension}|{shuffle}").shuffle(shuffled)
            chance += _kl_of_labelling(shuffled, item_of_x, x, v) / SHUFFLES
        terms[dimension] = max(0.0, observed - chance)
    return terms


def _kl_of_labelling(labels: list[str], item_of_x: np.ndarray, x: np.ndarray, v: int) -> float:
    """Σ_g (N_g/N)·D_KL(P_g ‖ M) for the groups that `labels` (one per item of the task) make."""
    names = sorted(set(labels))
    if len(names) < 2:
        return 0.0
    code = {name: k for k, name in enumerate(names)}
    group_of_item = np.array([code[label] for label in labels], dtype=np.int64)
    counts = np.bincount(group_of_item[item_of_x] * v + x, minlength=len(names) * v)
    counts = counts.reshape(len(names), v).astype(np.float64)
    n_g = counts.sum(axis=1)
    overall = counts.sum(axis=0)
    log_m = np.log((overall + ALPHA) / (overall.sum() + ALPHA * v))
    present = n_g > 0
    p = (counts[present] + ALPHA) / (n_g[present, None] + ALPHA * v)
    divergence = (p * (np.log(p) - log_m)).sum(axis=1)
    return float((n_g[present] / n_g.sum()) @ divergence)


CHECK = Check(
    name="ngram_kl",
    rounds=(1, 2),
    commands=("pool validate",),
    thresholds={"preflight.min_ngram_kl": Floor("min", 0.15)},
    run=lambda r: ngram_kl(r.pool, r.config.preflight.min_ngram_kl),
    runbook=Runbook(
        means="the episode framings (user-turn template, role, style) barely change a task's recurring word 3-grams: "
        "the pack's framings word the prompt alike, or the task meets too few of them",
        tries=(
            "vary the template pack data.templates names: more user-turn templates per task (tasks.yaml), roles "
            "(roles.yaml) and styles (styles.yaml) whose wording differs",
            "check that data.templates names the intended pack (templates/pack_v2) and that the pool was rebuilt "
            "after the pack changed (rc1 pool build in INIT, or rc1 advance)",
            "production may not lower preflight.min_ngram_kl below 0.15 (PRODUCTION_FLOORS); lower it only on the "
            "local profile",
        ),
    ),
)
