"""A task of yours: where its records' easy/medium/hard comes from, the best signal the records and the model give.

1. declared: a `difficulty` column (data.tasks.<name>.difficulty_column) of easy, medium or hard, used as given.
2. measured: the base model's success over `probe_samples` sampled replies per record, in round 1
   (rc1/app/difficulty_probe.py): a record it always solves is easy, one it never solves is hard, the rest medium —
   the split GRPO cares about, since a group whose replies all score alike has no advantage to learn from.
3. heuristic: the generic text metrics (rc1/data/difficulty.py) voting on the record itself, with the dimensions a
   record cannot have skipped by name: turns and tool hops are what rc1 dresses an episode with, not what a
   question/answer record holds, so they would vote easy on every record.

`auto` takes the first that applies: declared when the records have the column; measured when the model can measure
them (a configured model: the built-in one is built from the balanced pool this decides) and they number at most
`probe_items`; else heuristic. Every item of the task keeps its label from here on: rebalancing and the held-out sets
take it as given (rc1/data/balance.py, rc1/data/sources.py), the episode is dressed for it.

Live episodes (data.episodes: live): a built-in task whose items its generator builds (not one from data.sources) takes
the same declared path: each item's `difficulty`, as the generator built it, is its label (`GENERATED`, `given_tasks`).
A live item's gold path does not go where the generators put difficulty (distractor pages it never opens, a step it
folds into a calc), so what the metrics measure of it cannot bucket it; its slots ask for data.difficulty_target, as a
task of yours does. Recorded episodes keep the metrics' vote: the recorded template is built to show its difficulty.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from rc1.core.errors import BadInput
from rc1.data.difficulty import bucket_and_margin, measure
from rc1.data.source_ref import DifficultyRef
from rc1.data.task import DIFFICULTIES, Difficulty, TaskItem

# The heuristic dimensions a question/answer record cannot vote on: rc1 dresses its episode with them.
RECORD_SKIPPED: tuple[str, ...] = ("turns", "tool_hops")
SignalKind = Literal["declared", "measured", "heuristic"]


class Signal(msgspec.Struct, frozen=True, kw_only=True):
    kind: SignalKind
    reason: str  # why this one, e.g. "the records have a `difficulty` column"
    skipped: tuple[str, ...] = ()  # heuristic dimensions that cannot apply (RECORD_SKIPPED)

    def text(self, task: str) -> str:
        if self == GENERATED:
            return f"{task}: declared by its generator (live episodes)"
        skipped = f"; {' and '.join(self.skipped)} skipped: a record has none, its episode gets them from rc1"
        return f"{task}: difficulty {self.kind} ({self.reason}{skipped if self.skipped else ''})"


# A built-in, generated task's signal in live episodes: the generator's label, used as given.
GENERATED = Signal(kind="declared", reason="its generator's label (live episodes)")


def generated_tasks(data) -> frozenset[str]:
    """The built-in tasks whose items keep their generator's difficulty: in live episodes, every task of data.mix that
    is generated (neither a task of yours nor one from data.sources); in recorded episodes none."""
    if data.episodes != "live":
        return frozenset()
    return frozenset(t for t, share in data.mix.items() if share > 0 and t not in data.tasks and t not in data.sources)


def given_tasks(data) -> frozenset[str]:
    """The tasks whose items' own `difficulty` is their bucket (the balancing's `given`, a fresh item's label): tasks
    of yours, and the generated ones of `generated_tasks`."""
    return frozenset(data.tasks) | generated_tasks(data)


def resolve(task: str, ref: DifficultyRef, columns: list[str], records: int) -> Signal:
    """The signal a task of yours uses, given its records' columns and count."""
    where = f"data.tasks.{task}.difficulty"
    has_column = ref.column in columns
    if ref.signal == "declared":
        if not has_column:
            raise BadInput(
                f"{where}: declared, but the records have no column `{ref.column}` (they have {', '.join(columns)}); "
                f"name it with data.tasks.{task}.difficulty_column, or use auto"
            )
        return Signal(kind="declared", reason=f"{where}: declared, column `{ref.column}`")
    if ref.signal == "measured":
        sampled = f", a seeded {ref.probe_items} of {records}" if records > ref.probe_items else ""
        return Signal(kind="measured", reason=f"{where}: measured, {ref.probe_samples} replies per record{sampled}")
    if ref.signal == "heuristic":
        return Signal(kind="heuristic", reason=f"{where}: heuristic", skipped=tuple(RECORD_SKIPPED))
    if has_column:
        return Signal(kind="declared", reason=f"the records have a `{ref.column}` column")
    if ref.can_measure and records <= ref.probe_items:
        return Signal(
            kind="measured",
            reason=f"no `{ref.column}` column; the base model measures the {records} records, "
            f"{ref.probe_samples} replies each",
        )
    why = (
        "the built-in model is built from the balanced pool it would measure"
        if not ref.can_measure
        else f"{records} records are more than data.tasks.{task}.probe_items ({ref.probe_items}) to measure"
    )
    return Signal(
        kind="heuristic",
        reason=f"no `{ref.column}` column, and {why}",
        skipped=tuple(RECORD_SKIPPED),
    )


def declared(value, column: str, where: str) -> Difficulty:
    text = value.strip().lower() if isinstance(value, str) else None
    if text not in DIFFICULTIES:
        raise BadInput(f"{where}: column `{column}` is {value!r}; a difficulty is easy, medium or hard")
    return text  # type: ignore[return-value]


def heuristic(item: TaskItem) -> Difficulty:
    """The text metrics' vote on the record as it stands, its turns and tool hops left out."""
    return bucket_and_margin(measure(item), skip=frozenset(RECORD_SKIPPED))[0]


def from_successes(solved: int, samples: int) -> Difficulty:
    """Always solved: easy; never: hard; sometimes: medium."""
    return "easy" if solved == samples else "hard" if solved == 0 else "medium"


class ProbedItem(msgspec.Struct, frozen=True, kw_only=True, array_like=True):
    id: str
    solved: int
    cut: int  # replies that ran to the completion limit
    difficulty: Difficulty


class ProbeLabels(msgspec.Struct, frozen=True, kw_only=True):
    """data/<run>/difficulty_probe_<task>.json: what round 1's probe measured, and what it measured it from (`key`:
    the model, the records' sha256, the sampling and the ids; the same key reuses the file)."""

    task: str
    key: str
    model: str
    samples: int
    temperature: float
    max_completion_tokens: int
    seconds: float
    items: list[ProbedItem]

    def labels(self) -> dict[str, Difficulty]:
        return {p.id: p.difficulty for p in self.items}


def read_labels(path) -> ProbeLabels:
    try:
        return msgspec.json.decode(path.read_bytes(), type=ProbeLabels)
    except FileNotFoundError:
        raise BadInput(f"{path}: not found; round 1 measures the task's difficulty (rc1 advance)") from None
    except msgspec.DecodeError as e:
        raise BadInput(f"{path}: not a difficulty probe's labels: {e}") from None
