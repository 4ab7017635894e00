"""Finding and importing a Python function a config names as `package.module:function`, with the config file's
folder first on the import path (so a module beside the config is found). Used for your reward functions."""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
from collections.abc import Callable
from pathlib import Path


def parse_path(path: str) -> tuple[str, str] | None:
    """`package.module:function` split in two, or None where it is not of that form."""
    module, colon, attribute = path.partition(":")
    if (
        not colon
        or not module
        or not attribute
        or not all(part.isidentifier() for part in module.split("."))
        or not all(part.isidentifier() for part in attribute.split("."))
    ):
        return None
    return module, attribute


def source_file(path: str, folder: Path) -> Path | None:
    """The file the function's module is read from, found without running any of it (a package's `__init__`
    included: `importlib.util.find_spec` would run it), through the config's folder and then sys.path; None where
    it is not a module file there."""
    parsed = parse_path(path)
    if parsed is None:
        return None
    search: list[str] | None = [str(folder), *sys.path]
    spec = None
    for part in parsed[0].split("."):
        if search is None:
            return None
        try:
            spec = importlib.machinery.PathFinder.find_spec(part, search)
        except (ImportError, ValueError, OSError):
            return None
        if spec is None:
            return None
        search = list(spec.submodule_search_locations) if spec.submodule_search_locations is not None else None
    origin = Path(spec.origin) if spec is not None and spec.origin else None
    return origin if origin is not None and origin.is_file() else None


def source_files(path: str, folder: Path) -> list[Path]:
    """What a function's fingerprint covers: its module's file, and for a module of a package every .py file under
    the package's top folder (the helpers it imports from there); [] where the module is not found."""
    found = source_file(path, folder)
    if found is None:
        return []
    top = parse_path(path)[0].split(".")[0]
    package = next(
        (parent for parent in found.parents if parent.name == top and (parent / "__init__.py").exists()), None
    )
    return sorted(package.rglob("*.py")) if package is not None else [found]


def load_function(path: str, folder: Path) -> Callable:
    """Import `package.module:function` (the config's folder first on the path). Raises ImportError or
    AttributeError with what went wrong; the round-1 check reports it."""
    parsed = parse_path(path)
    if parsed is None:
        raise ImportError(f"{path!r} is not of the form package.module:function")
    module_name, attribute = parsed
    # The folder stays on the path: a function that imports a module beside it while it scores must find it too.
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    module = importlib.import_module(module_name)
    target = module
    for part in attribute.split("."):
        target = getattr(target, part)
    if not callable(target):
        raise TypeError(f"{path} is a {type(target).__name__}, not a function")
    return target
