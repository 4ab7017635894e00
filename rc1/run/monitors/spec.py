"""What a monitor rule declares (one module per rule in rc1/run/monitors/rules/, collected in one table by explicit
imports): its thresholds as a config section, when it is checked, the signals it reads and how much of them the fold
keeps for it, how it reads the folded state, and its runbook. The fold keeps what the watched rules declare and
nothing for a rule that is off, so a rule on a new signal needs no change outside its module and its table line."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import msgspec

from rc1.core.runbook import Runbook
from rc1.run.monitors.state import Reading

Action = Literal["warn", "halt", "stop"]
CheckedAt = Literal["step", "eval"]


class RuleParams(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A rule's section of `monitors:`; each rule adds its thresholds, `window` and `action`."""


@dataclass(frozen=True)
class SignalPath:
    """Something a rule reads, named where the log holds it: an event's type, a field, and a key where the field is a
    dict (`train_step.diagnostics.entropy`); `*.ts` is every event's timestamp."""

    path: str
    # A number of each train_step (train_step.<field> or train_step.<field>.<key>) that the fold keeps, by path, in
    # StepPoint.values of the recent steps the rule needs; otherwise it is read from what the fold keeps anyway (the
    # evaluations, the spend, the steps between evaluations) and is named here for status and `rc1 ls monitors`.
    each_step: bool = False
    # Measured on the replies the training samples: a strategy that trains on gold samples none, so records none.
    sampled: bool = False


def its_window(params: Any) -> int:
    """The recent steps most step rules need: their window."""
    return params.window


@dataclass(frozen=True, kw_only=True)
class MonitorSpec:
    name: str
    about: str  # one line: what it watches (docs/tables.md, `rc1 config explain monitors`)
    runbook: Runbook
    # Its section of `monitors:` (None: not configurable, always on: the non-finite guard).
    params: type[RuleParams] | None = None
    # After which events it reads the state: a train_step, an eval_completed, or both.
    checked: tuple[CheckedAt, ...] = ()
    # (its params, the monitor state) -> its reading now, or None when there is not yet enough to read (too few
    # steps or evaluations for its window, or a signal the engine does not record).
    read: Callable[[Any, Any], Reading | None] | None = None
    reads: tuple[SignalPath, ...] = ()
    # (its params) -> how many of the most recent train_steps it reads back (state.watch.steps); None: none.
    steps_needed: Callable[[Any], int] | None = None
    # It reads the trends of the steps between evaluations (StepsBetween: reward, correctness, component shares),
    # which the fold accumulates only while a watched rule needs them.
    between_evals: bool = False

    @property
    def signal(self) -> str:
        """What it reads, as status says when it has no reading yet: "train_step.reward and components;
        eval_completed.item_sampled" (the signals grouped by event, in declared order)."""
        fields: dict[str, list[str]] = {}
        for signal in self.reads:
            event, _, field = signal.path.partition(".")
            fields.setdefault(event, []).append(field)
        return "; ".join(
            ("every event's " if event == "*" else f"{event}.") + _listed(names) for event, names in fields.items()
        )

    @property
    def sampled_only(self) -> bool:
        """Everything it reads is measured on the training's sampled replies: a strategy that samples none leaves it
        nothing to read, and it never trips."""
        return bool(self.reads) and all(signal.sampled for signal in self.reads)


def _listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
