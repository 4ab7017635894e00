"""Where one `data.sources` entry's records come from: an official-format file, or a hub dataset."""

from __future__ import annotations

from pathlib import Path

import msgspec


class SourceRef(msgspec.Struct, frozen=True, kw_only=True):
    path: Path | None = None  # a local file in the official format
    hub: str | None = None  # or a dataset id (or local dataset folder) for `datasets.load_dataset`
    subset: str | None = None
    split: str = "train"

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
