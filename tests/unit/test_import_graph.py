"""The package's folders are its layers, and they import only downwards: a module never imports one of a higher
folder, lazily or not; and no modules import each other in a circle, counting every import (under TYPE_CHECKING and
in functions too). `ls rc1` reads like this rule: every module lives in a folder, and `LAYERS` names the folders
bottom to top; a folder that is not in it, or a module at the package's root, fails here.

From the bottom: core (errors, files, the workspace, process rank, runbook entries, …); run (the domain with no I/O:
events, the state machine, the rules at the door, the aggregate, replay's fold and the monitors); eventlog (the log on
disk, its snapshot and audit); registry (what a config can name: strategies, engines, scorer providers); config;
data; scoring; checks; train; reader (the built-in reader: its corpus, build and shipped weights); views (of a
log); app (the writing session and the stages: the composition root); cli (one module per command); bench. Modules
of one folder may import each other.
"""

import ast
import graphlib
import importlib.util
from pathlib import Path

import pytest
from conftest import REPO

PACKAGE = REPO / "rc1"

LAYERS = [
    "core",
    "run",
    "eventlog",
    "registry",
    "config",
    "data",
    "scoring",
    "checks",
    "train",
    "reader",
    "views",
    "app",
    "cli",
    "bench",
]
LAYER_OF = {name: index for index, name in enumerate(LAYERS)}
ROOT_MODULES = {"__init__.py", "__main__.py"}  # the package's metadata (below every layer) and `python -m rc1` (above)


def _unit(module: str) -> str:
    """The folder (layer) of a dotted module: rc1.run.events -> run, rc1 -> rc1."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "rc1"  # the package itself: its metadata


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _package_of(path: Path) -> str:
    """The package a module's relative imports start from: a package's own (its __init__.py), else its folder's."""
    name = _module_name(path)
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def _imported(source: str, package: str) -> list[tuple[int, str, list[str]]]:
    """(line, module, names imported from it) for every import in `source`, lazy or not; a relative one
    (`from . import x`, `from ..pkg import y`) resolved against `package`, the importing module's."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            module = importlib.util.resolve_name("." * node.level + (node.module or ""), package)
            found.append((node.lineno, module, [alias.name for alias in node.names]))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, []) for alias in node.names]
    return found


def _imports(source: str, package: str) -> list[tuple[int, str]]:
    """(line, module) for every import of rc1 in `source`; `from rc1 import x` names rc1.x."""
    found = []
    for line, module, names in _imported(source, package):
        if module.split(".")[0] == "rc1":
            found += [(line, f"rc1.{name}") for name in names] if module == "rc1" and names else [(line, module)]
    return found


MODULES = sorted(PACKAGE.rglob("*.py"))
LAYER_OF |= {"rc1": -1, "__main__": len(LAYERS)}


def _layer(path: Path) -> tuple[str, int]:
    relative = path.relative_to(PACKAGE)
    unit = relative.parts[0] if len(relative.parts) > 1 else {"__init__.py": "rc1"}.get(relative.name, "__main__")
    return unit, LAYER_OF[unit]


def test_every_module_lives_in_a_folder_that_is_a_layer():
    at_root = {p.name for p in PACKAGE.glob("*.py")} - ROOT_MODULES
    assert not at_root, f"move these into the folder of their layer: {sorted(at_root)}"
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert folders == set(LAYERS), f"give these folders a layer in LAYERS: {sorted(folders - set(LAYERS))}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_imports_a_higher_layer(path):
    unit, layer = _layer(path)
    upward = [
        f"line {line}: {name} ({_unit(name)}, layer {LAYER_OF[_unit(name)]}) from {unit} (layer {layer})"
        for line, name in _imports(path.read_text(encoding="utf-8"), _package_of(path))
        if LAYER_OF[_unit(name)] > layer
    ]
    assert not upward, f"{path.relative_to(PACKAGE)} imports upwards: " + "; ".join(upward)


def test_a_relative_import_is_read_against_the_importing_modules_package():
    source = "from . import door\nfrom .monitors import fold\n\n\ndef later():\n    from ..app import session\n"
    assert _imports(source, "rc1.run") == [(1, "rc1.run"), (2, "rc1.run.monitors"), (6, "rc1.app")]
    assert _imports("from .. import cli\n", "rc1.run.monitors") == [(1, "rc1.run")]
    assert _imports("from ... import cli\n", "rc1.run.monitors") == [(1, "rc1.cli")]
    assert _package_of(PACKAGE / "run" / "replay.py") == "rc1.run"
    assert _package_of(PACKAGE / "run" / "monitors" / "__init__.py") == "rc1.run.monitors"


def test_no_modules_import_each_other_in_a_circle():
    """Layers allow imports within a layer; this holds those acyclic too (config's rules never import config)."""
    names = {_module_name(path) for path in MODULES}
    graph = {}
    for path in MODULES:
        targets = set()
        for _, module, imported in _imported(path.read_text(encoding="utf-8"), _package_of(path)):
            targets |= {module} | {f"{module}.{name}" for name in imported}
        graph[_module_name(path)] = (targets & names) - {_module_name(path)}
    try:
        tuple(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as e:
        pytest.fail(f"modules import each other in a circle: {' -> '.join(e.args[1])}")
