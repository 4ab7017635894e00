"""Rebalancing the seed pool to the difficulty target, task by task, as a subset of it.

Every item is bucketed by its measured metrics (`rc1.data.difficulty`), not by the difficulty its
generator was asked for. The balanced pool is the largest subset in which every task has exactly its
`mix` share and, within a task, the buckets have the target shares (hard rounded up and easy rounded
down, so "hard ≥ target" and "easy ≤ target" hold at any size). Within a bucket the most typical
items are kept: first those whose clue_overlap votes for the bucket (the validation bounds its
median), then the largest vote margin; ties go by a seeded order. Items carry their measured bucket as
`difficulty` from here on, so the reward's difficulty factor sees what was measured. A task of yours is bucketed by
its records' own difficulty instead (declared, measured by the base model, or voted on the record itself:
rc1/data/task_difficulty.py), which its episode was dressed for.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict

import msgspec

from rc1.data.difficulty import ItemMetrics, bucket_and_margin, votes
from rc1.data.pool import allocate
from rc1.data.task import DIFFICULTIES, TaskItem


class Shortfall(msgspec.Struct, frozen=True, kw_only=True):
    task: str
    bucket: str
    available: int
    needed: int  # for a balanced pool as large as the seed pool


class Balanced(msgspec.Struct, frozen=True, kw_only=True):
    items: list[TaskItem]
    seed_buckets: dict[str, dict[str, int]]  # task -> bucket -> items in the seed pool
    balanced_buckets: dict[str, dict[str, int]]
    shortfalls: list[Shortfall]  # the buckets that kept the balanced pool smaller than the seed pool


def bucket_counts(n: int, target: dict[str, float]) -> dict[str, int]:
    """Per-bucket counts for n items: hard rounded up, easy rounded down, medium the rest."""
    total = sum(target.values())
    hard = math.ceil(n * target["hard"] / total - 1e-9)
    easy = min(n - hard, math.floor(n * target["easy"] / total + 1e-9))
    return {"easy": easy, "medium": n - hard - easy, "hard": hard}


def rebalance(
    items: list[TaskItem],
    metrics: list[ItemMetrics],
    target: dict[str, float],
    mix: dict[str, float],
    seed: int,
    given: frozenset[str] = frozenset(),
) -> Balanced:
    """`given`: the tasks whose items' own difficulty is their bucket (tasks of yours: rc1/data/task_difficulty.py);
    within a bucket they are all equally typical (a seeded order)."""
    ranked: dict[str, dict[str, list[tuple[int, int]]]] = defaultdict(lambda: {d: [] for d in DIFFICULTIES})
    for index, m in enumerate(metrics):
        if m.task in given:
            ranked[m.task][items[index].difficulty].append((0, index))
            continue
        label, margin = bucket_and_margin(m)
        clue_agrees = votes(m).get("clue_overlap") == label
        ranked[m.task][label].append((clue_agrees * 1000 + margin, index))
    supply = {task: {d: len(v) for d, v in buckets.items()} for task, buckets in sorted(ranked.items())}
    per_task = {
        task: _largest_fit(supply.get(task, dict.fromkeys(DIFFICULTIES, 0)), target)
        for task, share in mix.items()
        if share > 0
    }
    size = _largest_mix(per_task, mix, upper=len(items))
    order = random.Random(f"balance|{seed}")
    tiebreak = {index: order.random() for index in range(len(items))}
    chosen: list[TaskItem] = []
    balanced: dict[str, dict[str, int]] = {}
    for task, count in allocate(size, {t: s for t, s in mix.items() if s > 0}).items():
        balanced[task] = bucket_counts(count, target)
        for label, wanted in balanced[task].items():
            best = sorted(ranked[task][label], key=lambda mi: (-mi[0], tiebreak[mi[1]]))[:wanted]
            chosen += [msgspec.structs.replace(items[i], difficulty=label) for _, i in best]
    order.shuffle(chosen)
    full = allocate(len(items), {t: s for t, s in mix.items() if s > 0})
    shortfalls = [
        Shortfall(task=task, bucket=label, available=supply.get(task, {}).get(label, 0), needed=needed)
        for task, n in full.items()
        for label, needed in bucket_counts(n, target).items()
        if supply.get(task, {}).get(label, 0) < needed
    ]
    return Balanced(items=chosen, seed_buckets=supply, balanced_buckets=balanced, shortfalls=shortfalls)


def _largest_fit(supply: dict[str, int], target: dict[str, float]) -> int:
    """The most items of one task whose target bucket counts the supply covers."""
    n = sum(supply.values())
    while n > 0 and any(need > supply[d] for d, need in bucket_counts(n, target).items()):
        n -= 1
    return n


def _largest_mix(per_task: dict[str, int], mix: dict[str, float], upper: int) -> int:
    """The largest pool whose exact task split never asks a task for more than it can give."""
    shares = {t: s for t, s in mix.items() if s > 0}
    total = sum(shares.values())
    size = min(upper, *(math.floor(per_task[t] * total / s) for t, s in shares.items())) if shares else 0
    while size > 0 and any(n > per_task[t] for t, n in allocate(size, shares).items()):
        size -= 1
    return size
