"""The files a config names whose content is the run's as much as its values are: your reward functions' sources
and your tasks' record files. `load_config` folds their sha256 into the config's fingerprint (rc1/config/loading.py),
so an edit to one after the gates is a changed config; the kept config keeps them so a refusal can name the file."""

from __future__ import annotations

import hashlib
from pathlib import Path

from rc1.core.fsutil import sha256_file
from rc1.core.model_files import model_source, weights_sha256
from rc1.core.user_code import source_files


def named_files(config, folder: Path) -> dict[str, str]:
    """The sha256 of each reward function's source (its module file; for a module of a package, every .py file of
    the package, found without running any of it), of each reward model's files (rc1/core/model_files.py), of each
    tool of yours' source (as a reward function's), and of each task of yours' records file (a hub task: its id,
    which names no revision; training reads its records again for fresh items)."""
    files = {}
    for spec in config.reward.functions:
        if spec.model is not None:  # a reward model: its weights, config and tokenizer
            files[f"reward.functions.{spec.name}"] = weights_sha256(model_source(spec.model, folder))
            continue
        found = source_files(spec.path, folder)
        files[f"reward.functions.{spec.name}"] = (
            hashlib.sha256("".join(f"{p.name}:{sha256_file(p)}\n" for p in found).encode()).hexdigest()
            if found
            else "missing"
        )
    for spec in config.data.tools_of_yours:  # your tools: their sources, as a reward function's
        found = source_files(spec.path, folder)
        files[f"data.tools_of_yours.{spec.name}"] = (
            hashlib.sha256("".join(f"{p.name}:{sha256_file(p)}\n" for p in found).encode()).hexdigest()
            if found
            else "missing"
        )
    for name, task in config.data.tasks.items():
        where = (folder / task.path) if task.path is not None else None
        files[f"data.tasks.{name}"] = (
            sha256_file(where)
            if where is not None and where.is_file()
            else "missing"
            if where is not None
            else f"hub:{task.hub}"
        )
    return files
