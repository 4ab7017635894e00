"""The package's layers import only downwards: a module never imports one of a higher layer, lazily or not;
and no modules import each other in a circle, counting every import (under TYPE_CHECKING and in functions too).

From the bottom: the package's metadata and the utilities (errors, files, workspace, process rank, runbook entries,
…); events, the state machine and the monitors (a fold over the events, beside replay); the registry (what a config
can name: strategies, engines, scorer providers); config; data; the gate fingerprints; scoring; checks; train; the
views of a log; the writing session; stages; commands; the CLI and the benchmarks. Modules of one layer may import
each other.
"""

import ast
import graphlib
from pathlib import Path

import pytest
from conftest import REPO

PACKAGE = REPO / "rc1"

LAYERS = [
    {
        "rc1",
        "catalog",
        "errors",
        "fsutil",
        "failpoints",
        "progress",
        "provenance",
        "workspace",
        "distributed",
        "failure",
        "closed_pipe",
        "user_code",
        "named_files",
        "runbook",
    },
    {"events", "machine", "monitors"},
    {"registry"},
    {"config", "config_rules", "run_config"},
    {"data"},
    {"fingerprints"},
    {"scoring"},
    {"checks"},
    {"train"},
    {"views"},
    {"session"},
    {"stages"},
    {"commands"},
    {"cli", "__main__", "bench", "bench_training", "bench_arms", "bench_monitors", "bench_processes"},
]
LAYER_OF = {name: index for index, names in enumerate(LAYERS) for name in names}


def _unit(module: str) -> str:
    """The layer unit of a dotted module: rc1.events.log -> events, rc1.cli -> cli, rc1 -> rc1."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "rc1"


def _imports(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and node.module.split(".")[0] == "rc1":
            names = [f"rc1.{alias.name}" for alias in node.names] if node.module == "rc1" else [node.module]
            found += [(node.lineno, name) for name in names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names if alias.name.split(".")[0] == "rc1"]
    return found


MODULES = sorted(PACKAGE.rglob("*.py"))


def test_every_unit_of_the_package_has_a_layer():
    units = {path.relative_to(PACKAGE).parts[0].removesuffix(".py") for path in MODULES}
    units = {"rc1" if unit == "__init__" else unit for unit in units}
    assert units <= set(LAYER_OF), f"give these a layer: {sorted(units - set(LAYER_OF))}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_imports_a_higher_layer(path):
    relative = path.relative_to(PACKAGE)
    unit = (
        "rc1" if relative.name == "__init__.py" and len(relative.parts) == 1 else relative.parts[0].removesuffix(".py")
    )
    upward = [
        f"line {line}: {name} ({_unit(name)}, layer {LAYER_OF.get(_unit(name))}) from {unit} (layer {LAYER_OF[unit]})"
        for line, name in _imports(path)
        if LAYER_OF.get(_unit(name), -1) > LAYER_OF[unit]
    ]
    assert not upward, f"{relative} imports upwards: " + "; ".join(upward)


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_no_modules_import_each_other_in_a_circle():
    """Layers allow imports within a layer; this holds those acyclic too (config's rules never import config)."""
    names = {_module_name(path) for path in MODULES}
    graph = {}
    for path in MODULES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        targets = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
            elif isinstance(node, ast.Import):
                targets |= {alias.name for alias in node.names}
        graph[_module_name(path)] = (targets & names) - {_module_name(path)}
    try:
        tuple(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as e:
        pytest.fail(f"modules import each other in a circle: {' -> '.join(e.args[1])}")
