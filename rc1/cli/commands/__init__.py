"""The commands, one module each, in the order `rc1 --help` lists them. A command's module owns its parser and its
handler: `HELP` (its line in `rc1 --help`), `arguments(parser)` and `run(args) -> exit code`.

Adding a command is its module here, its name in `COMMANDS` and its test. A module imports the training stack
(torch, transformers, TRL) only inside `run`: every module is imported to build the parser, so `rc1 status` and
`rc1 --help` never load what they do not use (tests/unit/test_cli_commands.py).
"""

from __future__ import annotations

import importlib
from types import ModuleType

COMMANDS = (
    "advance",
    "status",
    "handoff",
    "replay",
    "audit",
    "rollouts",
    "repair",
    "report",
    "failpack",
    "preflight",
    "pool",
    "difficulty",
    "shadow",
    "scorer",
    "score",
    "calibrate",
    "ablate",
    "config",
    "export",
    "runbook",
    "ls",
    "train",
)


def command(name: str) -> ModuleType:
    return importlib.import_module(f"{__name__}.{name}")
