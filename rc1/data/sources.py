"""Swapping built-in items for records from official-format files or hub datasets, task by task.

The built-in generator fixes how many items of each task and difficulty there are; a
configured source supplies that many records, drawn with a seeded sample so the choice is
reproducible.
"""

from __future__ import annotations

import random
from collections import defaultdict
from pathlib import Path

import msgspec

from rc1.core.errors import BadInput
from rc1.data.loaders import load_source
from rc1.data.source_ref import Columns, DifficultyRef, SourceRef
from rc1.data.task import DIFFICULTIES, TaskItem
from rc1.data.task_difficulty import Signal
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
    A task of yours keeps each record's own label in either (its difficulty is the record's, not the slot's).
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
        yours = ref.columns is not None
        for difficulty in DIFFICULTIES[::-1]:  # hard first: its slots are the scarcest
            slots = slots_of.get(difficulty, [])
            # A held-out slot of an official file takes a record of its own label. A task of yours takes the nearest
            # label too, and its record keeps its own (declared, measured or voted: rc1/data/task_difficulty.py):
            # the slots only ask for a mix the balancing can meet, they never relabel what the records say.
            for label in _NEAREST[difficulty][: 1 if by_difficulty and not yours else 3]:
                take, unused[label] = unused[label][: len(slots)], unused[label][len(slots) :]
                for slot, record in zip(slots, take):
                    result[slot] = record if yours else msgspec.structs.replace(record, difficulty=difficulty)
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


def pool_sources(data, resolve, measuring: Measuring | None = None) -> dict[str, SourceRef]:
    """Where each task with records (`data.sources`, and your `data.tasks`) takes its pool's and fresh items."""
    return {task: _ref(src, src.path, src.split, resolve) for task, src in data.sources.items()} | your_tasks(
        data.tasks, resolve, "pool", measuring
    )


def shadow_sources(data, resolve, measuring: Measuring | None = None) -> dict[str, SourceRef]:
    """The held-out records of every task that names them (`shadow_path`, or `shadow_split` of its hub dataset),
    and of each task of yours (its held-out share)."""
    return {
        task: _ref(src, src.shadow_path, src.shadow_split, resolve)
        for task, src in data.sources.items()
        if src.shadow_path or src.shadow_split
    } | your_tasks(data.tasks, resolve, "held_out", measuring)


class Measuring(msgspec.Struct, frozen=True, kw_only=True):
    """What a measured difficulty needs beyond the config's task: whether the run's model can measure (a configured
    one), and the folder of the run's probe labels (data/<run>/, rc1/app/difficulty_probe.py)."""

    can_measure: bool
    labels_dir: Path | None = None


def measuring(loaded, ws) -> Measuring:
    """What a task of yours with a measured difficulty reads in this run: its probe labels (data/<run>/), and whether
    the run's model can measure at all (the built-in one is built from the pool it would measure)."""
    from rc1.core.catalog import is_builtin

    return Measuring(can_measure=not is_builtin(loaded.config.model.name), labels_dir=ws.data_dir)


def your_tasks(tasks: dict, resolve, part: str, measuring: Measuring | None = None) -> dict[str, SourceRef]:
    measuring = measuring or Measuring(can_measure=False)
    return {
        name: SourceRef(
            path=resolve(task.path) if task.path is not None else None,
            hub=task.hub,
            subset=task.subset,
            split=task.split,
            part=part,
            held_out_share=task.held_out_share,
            columns=Columns(question=task.question, answer=task.answer, context=task.context),
            difficulty=DifficultyRef(
                signal=task.difficulty,
                column=task.difficulty_column,
                can_measure=measuring.can_measure,
                probe_items=task.probe_items,
                probe_samples=task.probe_samples,
                labels=probe_labels_path(measuring.labels_dir, name) if measuring.labels_dir is not None else None,
            ),
        )
        for name, task in tasks.items()
    }


def your_signals(loaded, ws) -> dict[str, Signal]:
    """Where each task of yours takes its records' difficulty from in this run (rc1/data/task_difficulty.py)."""
    from rc1.data.loaders import your_records

    refs = your_tasks(loaded.config.data.tasks, loaded.resolve, "all", measuring(loaded, ws))
    return {task: your_records(task, ref).signal for task, ref in refs.items()}


def probe_labels_path(data_dir: Path, task: str) -> Path:
    return data_dir / f"difficulty_probe_{task}.json"


def _ref(src, path: str | None, split: str | None, resolve) -> SourceRef:
    if src.hub is not None:
        return SourceRef(hub=src.hub, subset=src.subset, split=split or src.split)
    return SourceRef(path=resolve(path))
