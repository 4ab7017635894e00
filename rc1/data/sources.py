"""Swapping built-in items for records from official-format files or hub datasets, task by task.

The built-in generator fixes how many items of each task and difficulty there are; a
configured source supplies that many records, drawn with a seeded sample so the choice is
reproducible.
"""

from __future__ import annotations

import random
from collections import defaultdict

import msgspec

from rc1.core.errors import BadInput
from rc1.data.loaders import load_source
from rc1.data.source_ref import Columns, SourceRef
from rc1.data.task import DIFFICULTIES, TaskItem
from rc1.data.text import normalize


class Missing(msgspec.Struct, frozen=True, kw_only=True):
    """What one source could not supply: `difficulty` "" is the task's whole share."""

    task: str
    path: str
    difficulty: str
    available: int
    needed: int

    @property
    def count(self) -> int:
        return self.needed - self.available

    def text(self) -> str:
        what = f"{self.task}/{self.difficulty}" if self.difficulty else self.task
        share = "" if self.difficulty else " for data.pool_size and data.mix"
        return (
            f"{self.path}: has {self.available} distinct {what} records; {self.needed} are needed ({self.count} "
            f"missing{share})"
        )


class SourceShortfall(BadInput):
    """Sources too small for their share. Outside a round (`rc1 pool build`) an exit-2 input error; round 1
    records it as its failing `data_sources` check instead (rc1/app/preflight.py)."""

    def __init__(self, missing: list[Missing]):
        self.missing = missing
        super().__init__("; ".join(m.text() for m in missing))


def replace_from_sources(
    items: list[TaskItem], sources: dict[str, SourceRef], seed: int, *, by_difficulty: bool
) -> list[TaskItem]:
    """Items with every task that has a source replaced by records from it (same counts, same positions).

    by_difficulty (the shadow set): each slot takes a record of its own difficulty label.
    Otherwise (the seed pool): a slot takes a record of its label while there are any, then of the nearest
    label (hard → medium → easy), and the record is dressed for the slot's difficulty: the episode, not
    only the source question, carries what the difficulty metrics measure (rc1/data/episodes.py).
    A record whose question repeats an earlier one's is left out, so no slot is filled with a duplicate.
    Every source that falls short is named in one SourceShortfall."""
    result = list(items)
    missing: list[Missing] = []
    for task, ref in sorted(sources.items()):
        slots_of: dict[str, list[int]] = defaultdict(list)
        for index, item in enumerate(items):
            if item.task == task:
                slots_of[item.difficulty].append(index)
        records = _distinct(load_source(task, ref))
        rng = random.Random(f"{seed}:{task}:{ref.name}")
        needed = sum(len(slots) for slots in slots_of.values())
        if not by_difficulty and len(records) < needed:
            missing.append(Missing(task=task, path=ref.label, difficulty="", available=len(records), needed=needed))
            continue
        unused = {d: rng.sample(rs, len(rs)) for d, rs in _by_label(records).items()}
        for difficulty in DIFFICULTIES[::-1]:  # hard first: its slots are the scarcest
            slots = slots_of.get(difficulty, [])
            # A held-out slot takes a record of its own label; a task of yours, whose labels are the generic
            # metrics' vote on the bare question, takes the nearest too and is dressed for the slot.
            for label in _NEAREST[difficulty][: 1 if by_difficulty and ref.columns is None else 3]:
                take, unused[label] = unused[label][: len(slots)], unused[label][len(slots) :]
                for slot, record in zip(slots, take):
                    result[slot] = msgspec.structs.replace(record, difficulty=difficulty)
                slots = slots[len(take) :]
            if slots:
                wanted = len(slots_of[difficulty])
                missing.append(
                    Missing(
                        task=task, path=ref.label, difficulty=difficulty, available=wanted - len(slots), needed=wanted
                    )
                )
    if missing:
        raise SourceShortfall(missing)
    return result


def _distinct(records: list[TaskItem]) -> list[TaskItem]:
    seen: set[str] = set()
    kept = []
    for record in records:
        key = normalize(record.question)  # the duplicates and leak checks' notion of "the same question"
        if key not in seen:
            seen.add(key)
            kept.append(record)
    return kept


# Where a slot of each difficulty looks for a record: its own label, then the nearest.
_NEAREST = {
    "hard": ("hard", "medium", "easy"),
    "medium": ("medium", "hard", "easy"),
    "easy": ("easy", "medium", "hard"),
}


def _by_label(records: list[TaskItem]) -> dict[str, list[TaskItem]]:
    grouped: dict[str, list[TaskItem]] = {d: [] for d in DIFFICULTIES}
    for record in records:
        grouped[record.difficulty].append(record)
    return grouped


def pool_sources(data, resolve) -> dict[str, SourceRef]:
    """Where each task with records (`data.sources`, and your `data.tasks`) takes its pool's and fresh items."""
    return {task: _ref(src, src.path, src.split, resolve) for task, src in data.sources.items()} | your_tasks(
        data.tasks, resolve, "pool"
    )


def shadow_sources(data, resolve) -> dict[str, SourceRef]:
    """The held-out records of every task that names them (`shadow_path`, or `shadow_split` of its hub dataset),
    and of each task of yours (its held-out share)."""
    return {
        task: _ref(src, src.shadow_path, src.shadow_split, resolve)
        for task, src in data.sources.items()
        if src.shadow_path or src.shadow_split
    } | your_tasks(data.tasks, resolve, "held_out")


def your_tasks(tasks: dict, resolve, part: str) -> dict[str, SourceRef]:
    return {
        name: SourceRef(
            path=resolve(task.path) if task.path is not None else None,
            hub=task.hub,
            subset=task.subset,
            split=task.split,
            part=part,
            held_out_share=task.held_out_share,
            columns=Columns(question=task.question, answer=task.answer, context=task.context),
        )
        for name, task in tasks.items()
    }


def _ref(src, path: str | None, split: str | None, resolve) -> SourceRef:
    if src.hub is not None:
        return SourceRef(hub=src.hub, subset=src.subset, split=split or src.split)
    return SourceRef(path=resolve(path))
