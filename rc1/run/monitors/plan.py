"""What the watched rules ask of the fold, from what each rule's spec declares: the numbers it keeps of each
train_step (StepPoint.values), for how many recent steps, whether it accumulates the steps between evaluations, and
which rules read the state at each check. Nothing here names a rule: a rule on a new signal declares it in its spec."""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from typing import Any, NamedTuple, get_args

import msgspec

from rc1.run import events as ev
from rc1.run.monitors.rules import CONFIGURABLE, MONITORS
from rc1.run.monitors.sections import rules_of
from rc1.run.monitors.spec import CheckedAt

_NUMBERS = (float, int, float | None, int | None)


def reader(path: str) -> Callable[[ev.TrainStep], Any]:
    """What reads the number at `path` (a SignalPath declared `each_step`) off a train_step: None where the step does
    not record it."""
    event, _, rest = path.partition(".")
    field, _, key = rest.partition(".")
    kind = {f.name: f.type for f in msgspec.structs.fields(ev.TrainStep)}.get(field)
    if event == "train_step" and key and kind in (dict[str, float], dict[str, int]):
        return lambda step: getattr(step, field).get(key)
    if event == "train_step" and key and kind == dict[str, float] | msgspec.UnsetType:  # recorded only on some lines
        return lambda step: None if (found := getattr(step, field)) is msgspec.UNSET else found.get(key)
    if event == "train_step" and not key and kind in _NUMBERS:
        return attrgetter(field)
    raise ValueError(
        f"a monitor signal read at each step names a number of a train_step: train_step.<field> (a number) or "
        f"train_step.<field>.<key> (a dict of numbers), not {path!r}"
    )


# Every number a rule of the table may keep of each step, compiled once: a path that names none fails at import.
READERS = {s.path: reader(s.path) for spec in MONITORS.values() for s in spec.reads if s.each_step}


class Plan(NamedTuple):
    readers: tuple[tuple[str, Callable[[ev.TrainStep], Any]], ...]  # (SignalPath.path, its reader), each kept once
    kept: int  # recent steps kept: the most any watched rule needs
    between_evals: bool  # a watched rule reads the steps between evaluations
    checked: dict[str, tuple[tuple[str, Callable, Any], ...]]  # step|eval -> (rule, its read, its params), in order


def plan(watched) -> Plan:
    """The plan of a line's rules (`watched`: its training_started.monitors; None: a log from before monitors)."""
    rules = rules_of(watched) if watched is not None else {}
    specs = {rule: CONFIGURABLE[rule] for rule in rules}
    paths = dict.fromkeys(s.path for spec in specs.values() for s in spec.reads if s.each_step)
    needed = [spec.steps_needed(rules[rule]) for rule, spec in specs.items() if spec.steps_needed is not None]
    return Plan(
        readers=tuple((path, READERS[path]) for path in paths),
        kept=max(needed, default=0),
        between_evals=any(spec.between_evals for spec in specs.values()),
        checked={
            check: tuple((rule, spec.read, rules[rule]) for rule, spec in specs.items() if check in spec.checked)
            for check in get_args(CheckedAt)
        },
    )


# The last record planned with its plan. A line's record is one object, folded at every step: its plan is worked out
# once per record (the record is frozen), not at every step.
_last: list[tuple[object, Plan]] = [(None, plan(None))]


def plan_of(watched) -> Plan:
    """`plan(watched)`, remembered for the last record asked."""
    record, planned = _last[0]
    if record is not watched:
        planned = plan(watched)
        _last[0] = (watched, planned)
    return planned
