"""Loaders for the official dataset formats, from local files or the HF hub (`datasets`), into TaskItems.

GSM8K: JSON Lines with `question` and `answer` (worked solution ending `#### <number>`).
HotpotQA: one JSON array of `_id`, `question`, `answer`, `type`, `level`, `supporting_facts`, `context`.
StrategyQA: one JSON array of `qid`, `question`, `answer` (bool), `facts`, `decomposition`, and
(dev/train) `term`, `description`.

A hub dataset's rows are read in the same shape (the hub's HotpotQA is turned back into the official one).
A bad record is an exit-2 error naming the file and the line (JSONL) or index (JSON array), or the
dataset and row.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path

import msgspec

from rc1.core.errors import BadInput
from rc1.core.fsutil import read_input_text
from rc1.data.generators import render_prompt
from rc1.data.source_ref import DifficultyRef, SourceRef
from rc1.data.task import DIFFICULTIES, Difficulty, TaskItem
from rc1.data.task_difficulty import Signal, declared, heuristic, read_labels, resolve

_GSM8K_FINAL = re.compile(r"####\s*(-?[\d,]*\.?\d+)\s*$")


def load_source(task: str, ref: SourceRef) -> list[TaskItem]:
    """The records of a `data.sources` entry: an official-format file, or a hub dataset through `datasets`; or of
    a task of yours (`data.tasks`), its pool's or its held-out part, each with its difficulty
    (rc1/data/task_difficulty.py): a measured task's are the probe's labels, and only the records it probed."""
    if ref.columns is not None:
        records = your_records(task, ref)
        items = records.items
        if records.signal.kind == "measured":
            labels = _probe_labels(task, ref)
            items = tuple(msgspec.structs.replace(i, difficulty=labels[i.id]) for i in items if i.id in labels)
        return [
            item
            for item in items
            if ref.part == "all" or (ref.part == "held_out") == is_held_out(item.question, ref.held_out_share)
        ]
    if ref.path is not None:
        return load_file(task, ref.path)
    return _PARSERS[task](_hub_records(task, ref), ref.label)


class YourRecords(msgspec.Struct, frozen=True):
    """A task of yours, every record (pool and held-out part): its items (a measured task's not labelled yet) and
    the signal their difficulty comes from."""

    items: tuple[TaskItem, ...]
    signal: Signal


def your_records(task: str, ref: SourceRef) -> YourRecords:
    whole = msgspec.structs.replace(
        ref, part="all", difficulty=msgspec.structs.replace(ref.difficulty or DifficultyRef(), labels=None)
    )
    return _your_task(task, whole, _stamp(ref.path))


def _probe_labels(task: str, ref: SourceRef) -> dict[str, str]:
    path = ref.difficulty.labels if ref.difficulty is not None else None
    if path is None:
        raise BadInput(
            f"data.tasks.{task}: its difficulty is measured by round 1's probe, which has not run for this run; "
            f"rc1 advance runs it"
        )
    return _labels_of(path, _stamp(path))


@functools.lru_cache(maxsize=8)
def _labels_of(path: Path, stamp: tuple[int, int] | None) -> dict[str, str]:
    """`stamp` (mtime, size): a probe written again is a new read."""
    return read_labels(path).labels()


def _stamp(path: Path | None) -> tuple[int, int] | None:
    if path is None or not path.is_file():
        return None
    stat = path.stat()
    return stat.st_mtime_ns, stat.st_size


def is_held_out(question: str, share: float) -> bool:
    """Whether a record of a task of yours is held out: its normalized question's sha256, read as a fraction of
    2**64, is below `share`. The same split on every run and machine, whatever the file's order."""
    import hashlib

    from rc1.data.text import normalize

    digest = hashlib.sha256(normalize(question).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < share


# datasets' builder for each kind of local file.
_BUILDERS = {".jsonl": "json", ".json": "json", ".csv": "csv", ".parquet": "parquet"}


@functools.lru_cache(maxsize=8)
def _your_task(task: str, ref: SourceRef, stamp: tuple[int, int] | None) -> YourRecords:
    """A task of yours: its rows through `datasets.load_dataset` (a local file by its builder, or a hub dataset),
    each a TaskItem with its declared or heuristic difficulty (a measured one is "medium" until labelled). Kept for
    the command: round 1 reads the pool's part and the held-out part of the same records; `stamp` (the file's mtime
    and size) makes an edited file a new read."""
    import datasets

    columns = ref.columns
    datasets.disable_progress_bars()  # rc1 reports its own progress; the builder's bars would interleave with it
    try:
        if ref.path is not None:
            builder = _BUILDERS.get(ref.path.suffix.lower())
            if builder is None:
                raise BadInput(f"{ref.path}: a task's file must be .jsonl, .json, .csv or .parquet")
            if not ref.path.is_file():
                raise BadInput(f"{ref.path}: not found")
            rows = datasets.load_dataset(builder, data_files=str(ref.path), split="train")
        else:
            rows = datasets.load_dataset(ref.hub, ref.subset, split=ref.split)
    except BadInput:
        raise
    except Exception as e:  # unreadable, an unknown id or split: the library says which
        raise BadInput(f"{ref.label}: cannot load through datasets: {type(e).__name__}: {e}") from None
    wanted = [c for c in (columns.question, columns.answer, columns.context) if c is not None]
    absent = [c for c in wanted if c not in rows.column_names]
    if absent:
        raise BadInput(
            f"{ref.label}: no column {', '.join(repr(c) for c in absent)} (it has "
            f"{', '.join(rows.column_names)}); name the columns in data.tasks.{task}"
        )
    difficulty = ref.difficulty or DifficultyRef()
    signal = resolve(task, difficulty, list(rows.column_names), len(rows))
    chosen = _probe_sample(task, ref, len(rows), difficulty.probe_items) if signal.kind == "measured" else None
    items = []
    for index, row in enumerate(rows):
        if chosen is not None and index not in chosen:
            continue
        where = f"{ref.label}[{index}]"
        question = _text(row[columns.question], columns.question, where)
        answer = _text(row[columns.answer], columns.answer, where)
        context = _text(row[columns.context], columns.context, where) if columns.context else ""
        item = TaskItem(
            id=f"{task}-file-{index:06d}",
            task=task,
            question=question,
            context=context,
            answer=answer,
            difficulty="medium",
            prompt=render_prompt(question, context),
            source=ref.label,
        )
        if signal.kind == "declared":
            item = msgspec.structs.replace(item, difficulty=declared(row[difficulty.column], difficulty.column, where))
        elif signal.kind == "heuristic":
            item = msgspec.structs.replace(item, difficulty=heuristic(item))
        items.append(item)
    return YourRecords(tuple(items), signal)


def _probe_sample(task: str, ref: SourceRef, records: int, most: int) -> set[int] | None:
    """The records a measured difficulty probes: all of them, or a seeded `most` (seeded by the file's name, so a
    moved file keeps its sample)."""
    import random

    if records <= most:
        return None
    return set(random.Random(f"probe|{task}|{ref.name}").sample(range(records), most))


def _text(value, column: str, where: str) -> str:
    """A cell as text: a bool as yes/no, a whole number without its `.0`. Empty, missing (None, NaN: an empty CSV
    cell) or not a scalar (a list, a struct: name the column that holds the text) is an error."""
    import math

    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and math.isnan(value):
        value = None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if value is not None and not isinstance(value, (str, int, float)):
        raise BadInput(
            f"{where}: column `{column}` holds a {type(value).__name__}, not text or a number; name the "
            f"column that holds it as text"
        )
    text = "" if value is None else str(value).strip()
    if not text:
        raise BadInput(f"{where}: column `{column}` is empty")
    return text


def load_file(task: str, path: Path) -> list[TaskItem]:
    records = _jsonl_records(path) if task == "gsm8k" else _array_records(path)
    return _PARSERS[task](records, str(path))


def load_gsm8k(path: Path) -> list[TaskItem]:
    return load_file("gsm8k", path)


def load_hotpotqa(path: Path) -> list[TaskItem]:
    return load_file("hotpotqa", path)


def load_strategyqa(path: Path) -> list[TaskItem]:
    return load_file("strategyqa", path)


Records = Iterable[tuple[str, str, object]]  # (where, id suffix, record)


def _gsm8k(records: Records, source: str) -> list[TaskItem]:
    items = []
    for where, key, record in records:
        question = _field(record, "question", str, where)
        solution = _field(record, "answer", str, where)
        match = _GSM8K_FINAL.search(solution)
        if not match:
            raise BadInput(f"{where}: `answer` must end with `#### <number>`")
        # Worked steps are the <<a op b=c>> annotations; more steps make a harder problem.
        steps = solution.count("<<") or len([s for s in solution.splitlines()[:-1] if s.strip()])
        items.append(
            TaskItem(
                id=f"gsm8k-file-{key}",
                task="gsm8k",
                question=question,
                answer=match.group(1).replace(",", ""),
                difficulty=_by_count(steps, easy_max=2, medium_max=4),
                prompt=render_prompt(question),
                source=source,
            )
        )
    return items


def _hotpotqa(records: Records, source: str) -> list[TaskItem]:
    items = []
    for where, _, record in records:
        question = _field(record, "question", str, where)
        answer = _field(record, "answer", str, where)
        level = _field(record, "level", str, where)
        if level not in DIFFICULTIES:
            raise BadInput(f"{where}: `level` must be easy, medium or hard, got {level!r}")
        _field(record, "type", str, where)
        _field(record, "supporting_facts", list, where)
        context = _field(record, "context", list, where)
        paragraphs = []
        for k, entry in enumerate(context):
            if not (
                isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str) and isinstance(entry[1], list)
            ):
                raise BadInput(f"{where}.context[{k}]: expected [title, [sentences…]]")
            paragraphs.append(f"{entry[0]}: {''.join(entry[1]).strip()}")
        text = "\n".join(paragraphs)
        items.append(
            TaskItem(
                id=f"hotpotqa-file-{_field(record, '_id', str, where)}",
                task="hotpotqa",
                question=question,
                context=text,
                answer=answer,
                difficulty=level,
                prompt=render_prompt(question, text),
                source=source,
            )
        )
    return items


def _strategyqa(records: Records, source: str) -> list[TaskItem]:
    items = []
    for where, _, record in records:
        question = _field(record, "question", str, where)
        answer = _field(record, "answer", bool, where)
        facts = _field(record, "facts", list, where)
        decomposition = _field(record, "decomposition", list, where)
        # The term and its description (dev/train files have them, the test file does not) are part of
        # the material: "Albany, Georgia: City in Georgia, United States."
        term = _optional(record, "term", str, where)
        description = _optional(record, "description", str, where)
        background = [f"{term}: {description.rstrip('.')}."] if term and description else []
        context = "\n".join([*background, *(str(f) for f in facts)])
        items.append(
            TaskItem(
                id=f"strategyqa-file-{_field(record, 'qid', str, where)}",
                task="strategyqa",
                question=question,
                context=context,
                answer="yes" if answer else "no",
                difficulty=_by_count(len(decomposition), easy_max=2, medium_max=3),
                prompt=render_prompt(question, context),
                source=source,
            )
        )
    return items


_PARSERS: dict[str, Callable[[Records, str], list[TaskItem]]] = {
    "gsm8k": _gsm8k,
    "hotpotqa": _hotpotqa,
    "strategyqa": _strategyqa,
}


def _jsonl_records(path: Path) -> Records:
    for lineno, line in enumerate(_read_text(path).splitlines(), 1):
        if line.strip():
            yield f"{path}:{lineno}", f"{lineno:06d}", _json(line, f"{path}:{lineno}")


def _array_records(path: Path) -> Records:
    for index, record in enumerate(_json_array(path)):
        yield f"{path}[{index}]", f"{index:06d}", record


def _hub_records(task: str, ref: SourceRef) -> Records:
    """Rows of a hub dataset (or a local dataset folder) through `datasets.load_dataset`, in the official
    record shape: the hub's HotpotQA stores `context` and `supporting_facts` as columns of lists."""
    import datasets

    try:
        rows = datasets.load_dataset(ref.hub, ref.subset, split=ref.split)
    except Exception as e:  # the hub unreachable, an unknown id, subset or split: the library says which
        raise BadInput(f"{ref.label}: cannot load through datasets: {type(e).__name__}: {e}") from None
    for index, row in enumerate(rows):
        if task == "hotpotqa" and isinstance(row.get("context"), dict):
            row = {
                **row,
                "_id": row.get("id", row.get("_id")),
                "context": [[t, s] for t, s in zip(row["context"]["title"], row["context"]["sentences"])],
                "supporting_facts": [
                    [t, i] for t, i in zip(row["supporting_facts"]["title"], row["supporting_facts"]["sent_id"])
                ],
            }
        yield f"{ref.label}[{index}]", f"{index:06d}", row


def _by_count(n: int, *, easy_max: int, medium_max: int) -> Difficulty:
    return "easy" if n <= easy_max else "medium" if n <= medium_max else "hard"


def _read_text(path: Path) -> str:
    return read_input_text(path, "data source")


def _json(text: str, where: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise BadInput(f"{where}: not valid JSON: {e.msg} at column {e.colno}") from None


def _json_array(path: Path) -> list:
    data = _json(_read_text(path), str(path))
    if not isinstance(data, list):
        raise BadInput(f"{path}: expected one JSON array of records, got {type(data).__name__}")
    return data


def _optional(record, name: str, kind: type, where: str):
    return _field(record, name, kind, where) if isinstance(record, dict) and name in record else None


def _field(record, name: str, kind: type, where: str):
    if not isinstance(record, dict):
        raise BadInput(f"{where}: expected a JSON object, got {type(record).__name__}")
    if name not in record:
        raise BadInput(f"{where}: missing field `{name}`")
    value = record[name]
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        raise BadInput(f"{where}: field `{name}` must be {kind.__name__}, got {type(value).__name__}")
    return value
