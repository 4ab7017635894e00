"""Kill points for crash tests: with `RC1_KILL_AT=<point>@<n>` set, the process SIGKILLs itself the n-th time
it reaches <point>. A kill timed from outside lands almost always inside a step (a step takes ~0.4 s on the
tiny model, an append or a rename microseconds); these name the narrow places between two durable effects,
so the crash tests hit each of them on purpose. Unset, as in every real run, `reached` costs one lookup.

| point | the process dies with |
|---|---|
| `step` | a step computed, its `train_step` not yet appended |
| `trips` | a check recorded (a `train_step` or an `eval_completed`), its monitors' trips not yet appended |
| `append:<event type>` | the event's line written, not yet fsynced nor applied to the projection |
| `publish` | a checkpoint staged and fsynced, not yet renamed into place |
| `checkpoint` | a checkpoint renamed into place, its `checkpoint_saved` not yet appended |
| `tool` | a live rollout's tool call about to run: mid-step, mid-episode, its step's rollouts half generated |
"""

from __future__ import annotations

import os
import signal

ENV = "RC1_KILL_AT"
_reached: dict[str, int] = {}


def reached(point: str) -> None:
    spec = os.environ.get(ENV)
    if not spec:
        return
    name, _, count = spec.partition("@")
    if name != point:
        return
    _reached[point] = _reached.get(point, 0) + 1
    if _reached[point] == int(count or 1):
        os.kill(os.getpid(), signal.SIGKILL)
