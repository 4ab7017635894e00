"""The rules at the door: whether the run, in the state its machine is in now, may record an event.

Triggers (round1_passed, training_started, checkpoint_saved, …) are the machine's to allow. Events that fire no
transition are true only in some states, and are refused in the others: a round's checks and verdict while that
round may run, an evaluation or a verdict of training while there is training, a line completed only while one is
unfinished, a model exported while the gates its training passed are in force (TRAINING, CHECKPOINTED: not
after gate_invalidated). The rest (run_started, artifact_written, log_repaired, a shadow run, checks run by hand)
may be written in any state. The same rules decide at the write (rc1/run/aggregate.py) and in replay, where an event
they refuse is a violation: recorded, not folded in, and an audit finding.
"""

from __future__ import annotations

from rc1.run import events as ev
from rc1.run.machine import TRIGGERS, RunMachine

TRAINING_STATES = frozenset({"TRAINING", "CHECKPOINTED"})
HALTED = frozenset({"HALTED"})
# Where a round's checks and verdict can be written: where the machine allows that round's gate to pass.
ROUND_STATES = {1: frozenset({"INIT"}), 2: frozenset({"R1_PASSED"})}


def trigger_of(event: ev.Event) -> str | None:
    """The machine trigger `event` fires, or None: a trigger is named after the event's type, and a monitor trip
    fires `monitor_halted` when it halts (a warn or a stop changes no state)."""
    if isinstance(event, ev.MonitorTripped):
        return "monitor_halted" if event.action == "halt" else None
    kind = ev.event_type(event)
    return kind if kind in TRIGGERS else None


def _states(event: ev.Event) -> frozenset[str] | None:
    """The states a non-trigger event can be written in; None: any."""
    match event:
        case ev.MonitorTripped():
            return TRAINING_STATES  # a warn or a stop; a halt is the machine's (monitor_halted)
        case ev.TrainingAmended():
            return HALTED  # only on the way out of a halt, before its halt_acknowledged
        case ev.ModelExported():
            return TRAINING_STATES | HALTED  # a halted line's checkpoints are still vouched for
        case ev.CheckPassed() | ev.CheckFailed() | ev.GateFailed():
            return ROUND_STATES.get(event.round)  # round 0: checks run by hand, outside any round
        case ev.GateSetEvaluated():
            return ROUND_STATES[2] if event.policy == "base" else TRAINING_STATES
        case (
            ev.EvalCompleted()
            | ev.BestPromoted()
            | ev.ReleaseEvaluated()
            | ev.ReleaseAcrossSeeds()
            | ev.TrainingFailed()
            | ev.RunCompleted()
        ):
            return TRAINING_STATES
    return None


def refusal(event: ev.Event, machine: RunMachine) -> str | None:
    """Why the run may not record `event` now (a sentence naming the event and the state), or None."""
    kind = ev.event_type(event)
    complete = " (the run is complete: every line of training has finished)" if machine.complete else ""
    trigger = trigger_of(event)
    if trigger is not None:
        what = "a halting monitor_tripped" if trigger != kind else kind
        return None if machine.may_trigger(trigger) else f"{what} is not allowed in state {machine.state}{complete}"
    states = _states(event)
    if states is not None and machine.state not in states:
        where = getattr(event, "round", None)
        what = f"{kind} of round {where}" if kind in ("check_passed", "check_failed", "gate_failed") else kind
        return f"{what} is not allowed in state {machine.state} (only in {', '.join(sorted(states))})"
    if isinstance(event, ev.RunCompleted) and machine.complete:
        return f"{kind} is not allowed in state {machine.state}{complete}"
    return None
