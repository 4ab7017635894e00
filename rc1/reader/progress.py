"""A reader build's progress, kept so a build stopped part-way (a session's end, a kill) goes on where it was and
ends in the same bytes as one that never stopped: the phase and its step, the model's weights, the optimizer's state
and the generator's, the curriculum's result and the losses so far, and the generator as it stood before the texts were
packed (the packed stream is drawn again from it, not stored). One file, replaced whole (written beside, then renamed);
a file of another recipe is refused, not read.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import msgspec
import torch

PROGRESS = "progress.pt"


class Progress(msgspec.Struct, kw_only=True):
    recipe_sha256: str
    phase: str  # curriculum | reading
    step: int  # the last step done in that phase
    induction_steps: int = 0  # the curriculum's result, once it is done
    induction_accuracy: float = 0.0
    losses: list[float] = msgspec.field(default_factory=list)


def recipe_sha256(recipe) -> str:
    return hashlib.sha256(msgspec.json.encode(recipe)).hexdigest()


def save(folder: Path, progress: Progress, model, optimizer, generator: torch.Generator, packing: torch.Tensor | None):
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{PROGRESS}.tmp-{os.getpid()}"
    torch.save(
        {
            "progress": msgspec.to_builtins(progress),
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "generator": generator.get_state(),
            "packing": packing,
        },
        tmp,
    )
    os.replace(tmp, folder / PROGRESS)


def load(folder: Path | None, recipe) -> dict | None:
    """The saved progress of `recipe`'s build in `folder`, or None (no folder, nothing saved). A file of another
    recipe is an error naming both: it is not this build's to go on from."""
    path = folder / PROGRESS if folder is not None else None
    if path is None or not path.is_file():
        return None
    saved = torch.load(path, map_location="cpu", weights_only=True)
    progress = msgspec.convert(saved["progress"], Progress)
    if progress.recipe_sha256 != recipe_sha256(recipe):
        raise ValueError(f"{path}: the progress of another recipe's build; remove it or use another --state folder")
    saved["progress"] = progress
    return saved
