"""One small function per subcommand; `HANDLERS` is the only place names map to code.

Each handler's module is imported only when its command runs, so a read-only command (status, replay,
audit, handoff, config) never imports the training stack (torch, transformers) it does not use.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

HANDLERS = {
    "advance": "advance:run",
    "status": "inspect:status",
    "replay": "inspect:replay_until",
    "audit": "audit:run",
    "rollouts": "rollouts:run",
    "handoff": "inspect:handoff",
    "repair": "maintenance:repair",
    "report": "maintenance:report",
    "failpack": "maintenance:failpack",
    "preflight": "stages:preflight",
    "pool": "stages:pool",
    "shadow": "stages:shadow",
    "difficulty": "stages:difficulty",
    "scorer": "stages:scorer",
    "score": "score:run",
    "train": "stages:train",
    "config": "config:run",
    "export": "export:run",
    "runbook": "runbook:run",
    "ls": "ls:run",
}


def handler(command: str) -> Callable:
    module, function = HANDLERS[command].split(":")
    return getattr(importlib.import_module(f"rc1.cli.{module}"), function)
