"""Finding and importing a Python function a config names as `package.module:function`, with the config file's
folder first on the import path (so a module beside the config is found). Used for your reward functions."""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path


def parse_path(path: str) -> tuple[str, str] | None:
    """`package.module:function` split in two, or None where it is not of that form."""
    module, colon, attribute = path.partition(":")
    if not colon or not module or not attribute or not all(part.isidentifier() for part in module.split(".")) \
            or not all(part.isidentifier() for part in attribute.split(".")):
        return None
    return module, attribute


@contextlib.contextmanager
def _import_path(folder: Path):
    sys.path.insert(0, str(folder))
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(str(folder))


def source_file(path: str, folder: Path) -> Path | None:
    """The file the function's module is read from, found without running it (None: not found)."""
    parsed = parse_path(path)
    if parsed is None:
        return None
    with _import_path(folder):
        try:
            spec = importlib.util.find_spec(parsed[0])
        except (ImportError, ValueError):
            return None
    return Path(spec.origin) if spec is not None and spec.origin and Path(spec.origin).is_file() else None


def load_function(path: str, folder: Path) -> Callable:
    """Import `package.module:function` (the config's folder first on the path). Raises ImportError or
    AttributeError with what went wrong; the round-1 check reports it."""
    parsed = parse_path(path)
    if parsed is None:
        raise ImportError(f"{path!r} is not of the form package.module:function")
    module_name, attribute = parsed
    with _import_path(folder):
        module = importlib.import_module(module_name)
    target = module
    for part in attribute.split("."):
        target = getattr(target, part)
    if not callable(target):
        raise TypeError(f"{path} is a {type(target).__name__}, not a function")
    return target
