"""The seed pool and the shadow eval set, built from the generators in exact, deterministic proportions.

Pool and shadow never share a generator stream: every item's random source is keyed by its id prefix
("gsm8k" vs "shadow-gsm8k") as well as the seed, so even equal seeds give unrelated items. The
preflight leak check verifies this rather than trusting it.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction

from rc1.core.catalog import TASKS
from rc1.data.generators import generate
from rc1.data.task import DIFFICULTIES, TaskItem


def allocate(n: int, mix: dict[str, float]) -> dict[str, int]:
    """Split n by the shares in `mix` with the largest-remainder method: exact sum, ties broken by name.

    Shares are read as the decimals they were written as (0.45 is 9/20, not its binary neighbour), so
    a tie on paper is a tie here. Shares need not sum to 1; they are normalized.
    """
    if n < 0:
        raise ValueError(f"cannot allocate a negative count ({n})")
    shares = {name: Fraction(repr(float(share))) for name, share in mix.items()}
    if any(share < 0 for share in shares.values()):
        raise ValueError(f"mix shares must be non-negative, got {mix}")
    total = sum(shares.values())
    if total <= 0:
        raise ValueError(f"mix shares must have a positive sum, got {mix}")
    quotas = {name: n * share / total for name, share in shares.items()}
    counts = {name: math.floor(q) for name, q in quotas.items()}
    leftover = n - sum(counts.values())
    by_remainder = sorted(quotas, key=lambda name: (-(quotas[name] - counts[name]), name))
    for name in by_remainder[:leftover]:
        counts[name] += 1
    return dict(sorted(counts.items()))


def build_pool(
    n: int, mix: dict[str, float], seed: int, difficulty_mix: dict[str, dict[str, float]] | None = None
) -> list[TaskItem]:
    """n items, ids f"{task}-{i:06d}", in a seeded interleaved order (not grouped by task).

    `difficulty_mix[task]` asks that task's generator for exact shares of easy/medium/hard (in a seeded
    order); a task it does not name, or no mix at all, lets each item draw its own difficulty uniformly.
    """
    items = []
    for task, count in allocate(n, mix).items():
        difficulties = None
        if difficulty_mix is not None and task in difficulty_mix:
            per = allocate(count, difficulty_mix[task])
            difficulties = [d for d in DIFFICULTIES for _ in range(per.get(d, 0))]
            random.Random(f"pool-difficulty|{task}|{seed}").shuffle(difficulties)
        items += _slots(task, count, seed, task, difficulties)
    random.Random(f"pool-order|{seed}").shuffle(items)
    return items


def build_shadow(n: int, mix: dict[str, float], seed: int) -> list[TaskItem]:
    """n held-out items, ids f"shadow-{task}-{i:06d}", stratified task × difficulty (thirds within a task)."""
    items = []
    for task, count in allocate(n, mix).items():
        per_difficulty = allocate(count, dict.fromkeys(DIFFICULTIES, 1.0))
        difficulties = [d for d in DIFFICULTIES for _ in range(per_difficulty[d])]
        items += _slots(task, count, seed, f"shadow-{task}", difficulties)
    return items


def build_gate(n: int, mix: dict[str, float], tasks: list[str], seed: int) -> list[TaskItem]:
    """n held-out hard items of `tasks` for the release verdict (the gate set), ids f"gate-{task}-{i:06d}": split
    by the tasks' shares in `mix` (equally when none of them has one), from a stream no pool or shadow item shares."""
    shares = {task: mix.get(task, 0.0) for task in tasks}
    if sum(shares.values()) <= 0:
        shares = dict.fromkeys(tasks, 1.0)
    items = []
    for task, count in allocate(n, shares).items():
        items += _slots(task, count, seed, f"gate-{task}", ["hard"] * count)
    return items


def _slots(task: str, count: int, seed: int, id_prefix: str, difficulties: list[str] | None) -> list[TaskItem]:
    """A built-in task's generated items; for a task of yours, empty slots of the same ids and difficulties, which
    its records fill (rc1/data/sources.py `replace_from_sources`, or it names what is missing)."""
    if task in TASKS:
        return generate(task, count, seed, id_prefix, difficulties=difficulties)
    rng = random.Random(f"{id_prefix}|{task}|{seed}")
    return [
        TaskItem(
            id=f"{id_prefix}-{i:06d}",
            task=task,
            question="",
            answer="",
            prompt="",
            source="",
            difficulty=difficulties[i] if difficulties is not None else rng.choice(DIFFICULTIES),
        )
        for i in range(count)
    ]
