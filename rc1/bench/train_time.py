"""Where a `rc1 train` process's wall time went, read off the events its session appended (a pure function of them
and the process's measured seconds): `make bench`'s training part prints it beside the bare TRL run.

Each gap between two of the session's events is the time it took to reach the later one, so it is charged to that
event's kind: a `train_step` closes a step (TRL's own `sec_per_step`, and what rc1 does around it: hooks, the archive's
rows, the append), a `checkpoint_saved` a checkpoint, an `eval_completed` a shadow-set evaluation, a
`gate_set_evaluated` or `release_evaluated` the verdict's evaluation. Before the session's first event and after its
last is start-up and exit (imports, loading the config, the model and the data).
"""

from __future__ import annotations

from itertools import pairwise

import msgspec

from rc1.run import events as ev
from rc1.run.monitors.spend import micros_of

STEPS = "training steps (TRL's sec_per_step)"
AROUND_STEPS = "around the steps (rc1's hooks, archive rows, appends)"
START_AND_EXIT = "start-up and exit (before the first event, after the last)"
PARTS: dict[type, str] = {
    ev.CheckpointSaved: "checkpoints",
    ev.EvalCompleted: "shadow-set evaluations",
    ev.GateSetEvaluated: "the gate set's evaluation and verdict",
    ev.ReleaseEvaluated: "the gate set's evaluation and verdict",
}
OTHER = "other events (promotions, artifacts, diagnostics)"


class TimeShare(msgspec.Struct, frozen=True):
    part: str
    seconds: float


def where_the_time_went(events: list[ev.Event], process_seconds: float) -> list[TimeShare]:
    """The process's seconds by part, in the order a run meets them, from the events after its log's last
    `run_started` (the session the process opened)."""
    starts = [i for i, event in enumerate(events) if isinstance(event, ev.RunStarted)]
    session = events[starts[-1] :] if starts else events
    if not session:
        return [TimeShare(START_AND_EXIT, process_seconds)]
    seconds = dict.fromkeys([START_AND_EXIT, STEPS, AROUND_STEPS, *PARTS.values(), OTHER], 0.0)
    span = (micros_of(session[-1].ts) - micros_of(session[0].ts)) / 1e6
    seconds[START_AND_EXIT] = process_seconds - span
    for before, event in pairwise(session):
        gap = (micros_of(event.ts) - micros_of(before.ts)) / 1e6
        if isinstance(event, ev.TrainStep):
            seconds[STEPS] += event.sec_per_step
            seconds[AROUND_STEPS] += gap - event.sec_per_step
        else:
            seconds[PARTS.get(type(event), OTHER)] += gap
    return [TimeShare(part, value) for part, value in seconds.items()]


def time_table(shares: list[TimeShare], bare_seconds: float) -> str:
    """The breakdown as lines of `make bench`'s output, each part also as a share of the bare TRL run's time."""
    total = sum(share.seconds for share in shares)
    lines = [f"    {'part':<58} {'seconds':>8} {'× bare':>7}"]
    lines += [f"    {s.part:<58} {s.seconds:8.1f} {s.seconds / bare_seconds:7.3f}" for s in shares]
    lines.append(f"    {'the process':<58} {total:8.1f} {total / bare_seconds:7.3f}")
    return "\n".join(lines)
