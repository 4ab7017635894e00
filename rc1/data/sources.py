"""Swapping built-in items for records from official-format files, task by task.

The built-in generator fixes how many items of each task and difficulty there are; a
configured source supplies that many records, drawn with a seeded sample so the choice is
reproducible.
"""

from __future__ import annotations

import random
from collections import defaultdict
from pathlib import Path

import msgspec

from rc1.data.loaders import load_source
from rc1.data.task import DIFFICULTIES, TaskItem
from rc1.errors import BadInput


def replace_from_sources(items: list[TaskItem], sources: dict[str, Path], seed: int, *, by_difficulty: bool) -> list[TaskItem]:
    """Items with every task that has a source replaced by records from it (same counts, same positions).

    by_difficulty (the shadow set): each slot takes a record of its own difficulty label, or the build fails.
    Otherwise (the seed pool): a slot takes a record of its label while there are any, then of the nearest
    label (hard → medium → easy), and the record is dressed for the slot's difficulty: the episode, not
    only the source question, carries what the difficulty metrics measure (rc1/data/episodes.py)."""
    result = list(items)
    for task, path in sorted(sources.items()):
        slots_of: dict[str, list[int]] = defaultdict(list)
        for index, item in enumerate(items):
            if item.task == task:
                slots_of[item.difficulty].append(index)
        records = load_source(task, path)
        rng = random.Random(f"{seed}:{task}:{path.name}")
        if not by_difficulty:
            needed = sum(len(slots) for slots in slots_of.values())
            if len(records) < needed:
                raise BadInput(f"{path}: has {len(records)} {task} records; {needed} are needed "
                               f"({needed - len(records)} missing for data.pool_size and data.mix)")
        unused = {d: rng.sample(rs, len(rs)) for d, rs in _by_label(records).items()}
        for difficulty in DIFFICULTIES[::-1]:  # hard first: its slots are the scarcest
            slots = slots_of.get(difficulty, [])
            for label in _NEAREST[difficulty][: 1 if by_difficulty else 3]:
                take, unused[label] = unused[label][: len(slots)], unused[label][len(slots):]
                for slot, record in zip(slots, take):
                    result[slot] = msgspec.structs.replace(record, difficulty=difficulty)
                slots = slots[len(take):]
            if slots:
                raise BadInput(f"{path}: has {len(slots_of[difficulty]) - len(slots)} {task}/{difficulty} records; "
                               f"{len(slots_of[difficulty])} are needed ({len(slots)} missing)")
    return result


# Where a slot of each difficulty looks for a record: its own label, then the nearest.
_NEAREST = {"hard": ("hard", "medium", "easy"), "medium": ("medium", "hard", "easy"), "easy": ("easy", "medium", "hard")}


def _by_label(records: list[TaskItem]) -> dict[str, list[TaskItem]]:
    grouped: dict[str, list[TaskItem]] = {d: [] for d in DIFFICULTIES}
    for record in records:
        grouped[record.difficulty].append(record)
    return grouped


def pool_sources(data_sources: dict, resolve) -> dict[str, Path]:
    return {task: resolve(src.path) for task, src in data_sources.items()}


def shadow_sources(data_sources: dict, resolve) -> dict[str, Path]:
    return {task: resolve(src.shadow_path) for task, src in data_sources.items() if src.shadow_path}
