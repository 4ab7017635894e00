"""Where one `data.sources` entry's records come from: an official-format file, or a hub dataset."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import msgspec

from rc1.core.catalog import DifficultySignal


class Columns(msgspec.Struct, frozen=True, kw_only=True):
    """Where a task of yours keeps its question, gold answer and (optional) context."""

    question: str
    answer: str
    context: str | None = None


class DifficultyRef(msgspec.Struct, frozen=True, kw_only=True):
    """Where a task of yours takes its records' difficulty from (data.tasks.<name>.difficulty and its keys), and, once
    round 1 has measured it, the probe's labels (rc1/app/difficulty_probe.py)."""

    signal: DifficultySignal = "auto"
    column: str = "difficulty"
    can_measure: bool = False  # a configured base model (the built-in one is built from the pool it would measure)
    probe_items: int = 1024
    probe_samples: int = 4
    labels: Path | None = None  # data/<run>/difficulty_probe_<task>.jsonl


class SourceRef(msgspec.Struct, frozen=True, kw_only=True):
    path: Path | None = None  # a local file in the official format (or of any columns, for a task of yours)
    hub: str | None = None  # or a dataset id (or local dataset folder) for `datasets.load_dataset`
    subset: str | None = None
    split: str = "train"
    # A task of yours (data.tasks): its columns, and which of its records this reference reads: those for the
    # pool, or those held out for the shadow and gate sets (`held_out_share` of them, by question hash).
    columns: Columns | None = None
    part: Literal["all", "pool", "held_out"] = "all"
    held_out_share: float = 0.0
    difficulty: DifficultyRef | None = None  # a task of yours

    @property
    def label(self) -> str:
        """How items, checks and errors name the source: the file's path, or hf:<id>[/<subset>]:<split>."""
        if self.path is not None:
            return str(self.path)
        return f"hf:{self.hub}{'/' + self.subset if self.subset else ''}:{self.split}"

    @property
    def name(self) -> str:
        """What seeds the draw from it (a file's name, so moving the file keeps the draw)."""
        return self.path.name if self.path is not None else self.label
