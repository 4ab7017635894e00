"""What a monitor rule declares (one module per rule in rc1/run/monitors/rules/, collected in one table by explicit
imports): its thresholds as a config section, when it is checked, how it reads the folded state, and its runbook."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import msgspec

from rc1.core.runbook import Runbook
from rc1.run.monitors.state import Reading

Action = Literal["warn", "halt", "stop"]
Check = Literal["step", "eval"]


class RuleParams(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A rule's section of `monitors:`; each rule adds its thresholds, `window` and `action`."""


@dataclass(frozen=True, kw_only=True)
class MonitorSpec:
    name: str
    about: str  # one line: what it watches (docs/tables.md, `rc1 config explain monitors`)
    runbook: Runbook
    # Its section of `monitors:` (None: not configurable, always on: the non-finite guard).
    params: type[RuleParams] | None = None
    # After which events it reads the state: a train_step, an eval_completed, or both.
    checked: tuple[Check, ...] = ()
    # (its params, the monitor state) -> its reading now, or None when there is not yet enough to read (too few
    # steps or evaluations for its window, or a signal the engine does not record).
    read: Callable[[Any, Any], Reading | None] | None = None
    signal: str = ""  # what it reads, named as status says when there is none: "train_step.diagnostics.entropy"
