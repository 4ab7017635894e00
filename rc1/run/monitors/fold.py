"""The monitors' fold: each event of the log folded into the MonitorState (no I/O, no clock: an event's own `ts` is the
only time read), and the trips the rules give now.

After a train_step the step rules read the state, after an eval_completed the evaluation rules; `due` is every rule
read at that check that breaches and is not quiet. A rule is quiet after its trip until a later check finds it clear
(so a `warn` is said once, not at every step), and after a person chose to go past its halt (halt_acknowledged with
`silenced`) until it clears at a step beyond that trip. A resume rewinds what the line watched to the checkpoint it
resumes from (the watch saved there): a line killed and resumed trips at the steps the uninterrupted line does.
"""

from __future__ import annotations

import math
from functools import singledispatch

import msgspec

from rc1.run import events as ev
from rc1.run.monitors.plan import plan_of
from rc1.run.monitors.sections import rules_of
from rc1.run.monitors.spend import Spend, accelerators, clock_spend, hours_spend, judge_spend, micros_of
from rc1.run.monitors.state import MonitorState, Reading, ShadowReadout, StepPoint, StepsBetween, TripRef, Watch

CORRECTNESS = "correctness"


class Due(msgspec.Struct, frozen=True, kw_only=True):
    """A trip the rules give now: the rule, its action, and the reading that breached."""

    rule: str
    action: str
    reading: Reading


def observe(state: MonitorState, watched, event: ev.Event) -> None:
    """Fold one event (already accepted by the run's rules) into `state`; `watched` is the line's rules (the latest
    training_started.monitors: None for a log from before monitors, which is watched by none)."""
    _tick(state, event)
    _observe(event, state, watched)


def observe_steps(state: MonitorState, watched, steps: list[ev.TrainStep]) -> None:
    """Fold a run of train_steps: the same as `observe` on each. With no rule watching them (a log from before
    monitors) only the spend and the clock move, summed in one pass (the clock's microseconds telescope)."""
    if watched is not None:
        for step in steps:
            observe(state, watched, step)
        return
    calls, tokens, cost = 0, 0, state.run_spend.judge_cost_usd
    line_cost = state.line_spend.judge_cost_usd
    for step in steps:
        scoring = step.scoring
        calls += scoring.calls
        tokens += scoring.prompt_tokens + scoring.completion_tokens
        cost += scoring.cost_usd
        line_cost += scoring.cost_usd
    clock, spent = state.clock, Spend()
    if clock.running:
        now = micros_of(steps[-1].ts)
        spent = clock_spend(now - clock.last_us, clock.accelerators)
        clock.last_us = now
    judged = judge_spend(calls, tokens, 0.0).plus(spent)
    state.line_spend = msgspec.structs.replace(state.line_spend.plus(judged), judge_cost_usd=line_cost)
    state.run_spend = msgspec.structs.replace(state.run_spend.plus(judged), judge_cost_usd=cost)
    state.step = steps[-1].step
    state.checked = ()


def due(state: MonitorState, watched) -> list[Due]:
    """The trips the rules give at the last check: every breaching `warn`, then at most one trip that ends training
    (the first halt in the table's order, else the first stop): once the run halts or the line stops, nothing else is
    recorded at that check."""
    if watched is None:
        return []
    rules = rules_of(watched)
    found = []
    for rule in state.checked:
        reading = state.watch.readings.get(rule)
        if reading is None or not reading.breach or rule in state.watch.quiet or rule in state.silenced:
            continue
        found.append(Due(rule=rule, action=rules[rule].action, reading=reading))
    warns = [d for d in found if d.action == "warn"]
    # A stop ends the line at a checkpoint: before the line's first one it waits (the rule still breaches at the
    # next check after it, and the line ends there).
    stops = [d for d in found if d.action == "stop"] if any(step > 0 for step in state.saved) else []
    ending = [d for d in found if d.action == "halt"] or stops
    return warns + ending[:1]


def _tick(state: MonitorState, event: ev.Event) -> None:
    """The time a training session spends between two of its events, as wall and accelerator hours. The gaps are not
    clamped (a clock set back counts back), so they telescope: a run of steps folded at once spends the same."""
    clock = state.clock
    if not clock.running or isinstance(event, ev.RunStarted):
        clock.running = False  # a new session: the gap since the last one's last event was not spent training
        return
    now = micros_of(event.ts)
    spent = clock_spend(now - clock.last_us, clock.accelerators)
    clock.last_us = now
    state.line_spend = state.line_spend.plus(spent)
    state.run_spend = state.run_spend.plus(spent)


def _pay(state: MonitorState, scoring: ev.ScoringSummary, *, line: bool = True) -> Spend:
    spent = judge_spend(scoring.calls, scoring.prompt_tokens + scoring.completion_tokens, scoring.cost_usd)
    if line:
        state.line_spend = state.line_spend.plus(spent)
    state.run_spend = state.run_spend.plus(spent)
    return spent


def _read(state: MonitorState, watched, check: str) -> None:
    """Every watched rule checked at `check` reads the state; a clear reading lifts a rule's quiet."""
    state.checked = ()
    if watched is None:
        return
    readings = dict(state.watch.readings)
    quiet = dict(state.watch.quiet)
    checked = []
    for rule, read, params in plan_of(watched).checked[check]:
        reading = _finite(read(params, state))
        if reading is None:
            continue
        readings[rule] = reading
        checked.append(rule)
        if not reading.breach:
            if rule in quiet and state.step > quiet[rule]:
                del quiet[rule]
            if rule in state.silenced and state.step > state.silenced[rule]:
                del state.silenced[rule]
    state.watch = msgspec.structs.replace(state.watch, readings=readings, quiet=quiet)
    state.checked = tuple(checked)


def _finite(reading: Reading | None) -> Reading | None:
    """A reading as the log can hold it: JSON has no NaN or infinity (msgspec writes them as null, which a float field
    then refuses), so a value that is not finite is kept as text in `not_finite`."""
    if reading is None:
        return None
    numbers = {**reading.measured, "value": reading.value if reading.value is not None else 0.0}
    if all(math.isfinite(v) for v in numbers.values()) and (
        reading.interval is None
        or all(math.isfinite(v) for v in (reading.interval.mean, reading.interval.low, reading.interval.high))
    ):
        return reading
    return msgspec.structs.replace(
        reading,
        measured={k: v for k, v in reading.measured.items() if math.isfinite(v)},
        not_finite={k: repr(v) for k, v in reading.measured.items() if not math.isfinite(v)},
        value=reading.value if reading.value is not None and math.isfinite(reading.value) else None,
        interval=None,
    )


def _save_at_checkpoint(state: MonitorState, step: int) -> None:
    """Keep the watch as it stands at checkpoint `step` (a resume from it restores this)."""
    if step in state.saved:
        state.saved[step] = state.watch


@singledispatch
def _observe(event: ev.Event, state: MonitorState, watched) -> None:
    """Events that change nothing the monitors read."""


@_observe.register
def _(event: ev.TrainingStarted, state: MonitorState, watched) -> None:
    k = event.resume_from_step
    if event.seed != state.seed:  # a new line of training (another seed): nothing of the last line carries over
        state.seed, state.evals, state.trips, state.saved, state.silenced = event.seed, [], [], {}, {}
        state.watch, state.stopping, state.line_spend = Watch(), None, Spend()
    else:  # the same line resumed: what it watched, as of the checkpoint it resumes from (at step 0: its start)
        state.watch = state.saved.get(k, Watch())
        state.saved = {step: watch for step, watch in state.saved.items() if step <= k}
        state.evals = [e for e in state.evals if e.step <= k]
        state.trips = [t for t in state.trips if t.step <= k]
        if state.stopping is not None and state.stopping.step > k:
            state.stopping = None
    if k == 0:  # the step-0 evaluation and its trips update this (a line that starts over keeps them, as replay does)
        state.saved.setdefault(0, state.watch)
    state.step = k
    state.max_steps = event.max_steps
    state.checked = ()
    state.weights = dict(event.weights)
    state.thinking = event.thinking
    clock = state.clock
    clock.running, clock.last_us = True, micros_of(event.ts)
    clock.accelerators = accelerators(event.device, event.processes)


@_observe.register
def _(event: ev.TrainStep, state: MonitorState, watched) -> None:
    spent = _pay(state, event.scoring)
    planned = plan_of(watched)
    watch = state.watch
    steps: tuple[StepPoint, ...] = ()
    if planned.kept:
        values = {path: value for path, read in planned.readers if (value := read(event)) is not None}
        point = StepPoint(
            step=event.step,
            values=values,
            judge_calls=spent.judge_calls,
            judge_tokens=spent.judge_tokens,
            judge_cost_usd=spent.judge_cost_usd,
            wall_seconds=event.sec_per_step,
        )
        steps = (watch.steps + (point,))[-planned.kept :]
    since = watch.since_eval
    if planned.between_evals:
        components = event.components
        since = since.add(event.step, event.reward, components.get(CORRECTNESS), _shares(components, state.weights))
    state.watch = msgspec.structs.replace(watch, steps=steps, since_eval=since)
    state.step = event.step
    _read(state, watched, "step")


def _shares(components: dict[str, float], weights: dict[str, float]) -> dict[str, float]:
    """Each weighted component's share of the step's weighted reward (none when that sum is not positive)."""
    weighed = {name: weights[name] * value for name, value in components.items() if name in weights}
    total = sum(weighed.values())
    return {name: value / total for name, value in weighed.items()} if total > 0 else {}


@_observe.register
def _(event: ev.CheckpointSaved, state: MonitorState, watched) -> None:
    state.saved[event.step] = state.watch


@_observe.register
def _(event: ev.EvalCompleted, state: MonitorState, watched) -> None:
    spent = _pay(state, event.scoring)
    state.last_eval_spend = spent.plus(hours_spend(event.seconds / 3600, state.clock.accelerators))
    readout = ShadowReadout(
        step=event.step,
        greedy=list(event.item_greedy),
        sampled=list(event.item_sampled),
        samples=event.samples,
        drift=event.drift,
        since_previous=state.watch.since_eval,
    )
    state.evals = [e for e in state.evals if e.step != event.step] + [readout]
    state.watch = msgspec.structs.replace(state.watch, since_eval=StepsBetween())
    state.step = max(state.step, event.step)
    _read(state, watched, "eval")
    _save_at_checkpoint(state, event.step)


@_observe.register
def _(event: ev.MonitorTripped, state: MonitorState, watched) -> None:
    trip = TripRef(rule=event.rule, step=event.step, action=event.action, seq=event.seq)
    state.trips.append(trip)
    state.watch = msgspec.structs.replace(state.watch, quiet={**state.watch.quiet, event.rule: event.step})
    if event.action == "stop":
        state.stopping = trip
    if event.action != "warn":
        state.clock.running = False  # the session ends at a halt or a stop
    _save_at_checkpoint(state, event.step)


@_observe.register
def _(event: ev.HaltAcknowledged, state: MonitorState, watched) -> None:
    state.checked = ()  # the person's choice closes the check that halted: what else it breached is read again later
    if event.silenced:
        state.silenced[event.rule] = event.step
    if event.choice == "stop":
        state.stopping = TripRef(rule=event.rule, step=event.step, action="stop", seq=event.seq, reason=event.reason)


@_observe.register
def _(event: ev.RunCompleted, state: MonitorState, watched) -> None:
    state.stopping = None
    state.clock.running = False


@_observe.register
def _(event: ev.TrainingFailed, state: MonitorState, watched) -> None:
    state.clock.running = False


@_observe.register
def _(event: ev.GateInvalidated, state: MonitorState, watched) -> None:
    state.seed, state.evals, state.trips, state.saved, state.silenced = None, [], [], {}, {}
    state.watch, state.stopping, state.line_spend, state.checked = Watch(), None, Spend(), ()
    state.clock.running = False


@_observe.register
def _(event: ev.RoundPassed, state: MonitorState, watched) -> None:
    _pay(state, event.scoring, line=False)


@_observe.register
def _(event: ev.GateFailed, state: MonitorState, watched) -> None:
    _pay(state, event.scoring, line=False)


@_observe.register
def _(event: ev.ShadowRunCompleted, state: MonitorState, watched) -> None:
    _pay(state, event.scoring, line=False)
