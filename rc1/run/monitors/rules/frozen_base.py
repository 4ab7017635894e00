"""frozen_base: the base a LoRA or QLoRA line trains over stays the base it started on. Always on, always `halt`.

A line with a frozen base records the sha256 of a sample of its frozen tensors when each of its segments starts
(`training_started.frozen_sha256`) and at each checkpoint (`checkpoint_saved.frozen_sha256`); a record whose hashes
differ from the line's first trips the guard, naming the tensors that moved. What moves a base that no step trains:
TRL's in-place merge and unmerge of the adapter at every vLLM sync (trl#6688; rc1 syncs out of place,
rc1/train/vllm_sync.py), a hub model that changed under its name between a line's start and its resume, a trainer or
a callback that writes to the base. Its trip is derived from those two events alone (a pure function, `moved`), so
`rc1 audit` re-derives it; on a line whose base never moves it never trips (every run of the suite)."""

from __future__ import annotations

from rc1.core.runbook import Runbook
from rc1.run.monitors.spec import MonitorSpec, SignalPath


def moved(first: dict[str, str], now: dict[str, str]) -> list[str]:
    """The sampled tensors whose hash differs from the line's first record (or that one record has and the other
    lacks), sorted; [] where either record is empty (a line without a frozen base, a segment that sampled nothing)."""
    if not first or not now:
        return []
    return sorted(name for name in first.keys() | now.keys() if first.get(name) != now.get(name))


def detail(moved_names: list[str], at: str) -> str:
    shown = ", ".join(moved_names[:3]) + (f" and {len(moved_names) - 3} more" if len(moved_names) > 3 else "")
    count = len(moved_names)
    return f"the frozen base moved {at}: {count} sampled tensor(s) no longer hash as at the line's start ({shown})"


SPEC = MonitorSpec(
    name="frozen_base",
    about="the frozen base's sampled tensors hash as at the line's start, at each resume and checkpoint (always on)",
    reads=(SignalPath("training_started.frozen_sha256"), SignalPath("checkpoint_saved.frozen_sha256")),
    runbook=Runbook(
        means="the weights the adapter is trained over changed: an in-place adapter merge (a vLLM sync outside rc1's "
        "out-of-place path), a model under the same name that changed since the line started, or code that wrote to "
        "the base; the adapter no longer matches the base it was trained on",
        tries=(
            "if model.name is a hub name, pin its revision (the one the line started on) and roll back: rc1 advance "
            "--from step_N (the last checkpoint before the trip) --because …",
            "if vLLM syncs the weights, check that rollouts go through rc1's trainer (rc1/train/vllm_sync.py), not a "
            "TRL patched elsewhere",
            "start the line over from step 0 on the base as it is now: rc1 advance --from start --because …",
        ),
    ),
)
