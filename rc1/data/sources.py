"""Swapping built-in items for records from official-format files, task by task.

The built-in generator fixes how many items of each task (and, for the shadow set,
of each difficulty) there are; a configured source supplies that many records,
drawn with a seeded sample so the choice is reproducible.
"""

from __future__ import annotations

import random
from collections import defaultdict
from pathlib import Path

from rc1.data.loaders import load_source
from rc1.data.task import TaskItem
from rc1.errors import BadInput


def replace_from_sources(items: list[TaskItem], sources: dict[str, Path], seed: int, *, by_difficulty: bool) -> list[TaskItem]:
    """Items with every task that has a source replaced by records from it (same counts, same positions)."""
    result = list(items)
    for task, path in sorted(sources.items()):
        positions: dict[tuple, list[int]] = defaultdict(list)
        for index, item in enumerate(items):
            if item.task == task:
                positions[(item.difficulty if by_difficulty else None,)].append(index)
        records = load_source(task, path)
        rng = random.Random(f"{seed}:{task}:{path.name}")
        for (difficulty,), slots in sorted(positions.items(), key=lambda kv: str(kv[0])):
            pool = [r for r in records if difficulty is None or r.difficulty == difficulty]
            if len(pool) < len(slots):
                cell = f"{task}/{difficulty}" if difficulty else task
                raise BadInput(f"{path}: has {len(pool)} {cell} records; {len(slots)} are needed")
            for slot, record in zip(slots, rng.sample(pool, len(slots))):
                result[slot] = record
    return result


def pool_sources(data_sources: dict, resolve) -> dict[str, Path]:
    return {task: resolve(src.path) for task, src in data_sources.items()}


def shadow_sources(data_sources: dict, resolve) -> dict[str, Path]:
    return {task: resolve(src.shadow_path) for task, src in data_sources.items() if src.shadow_path}
