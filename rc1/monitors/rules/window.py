"""What the step rules share: the mean of a signal over the last `window` steps that record it."""

from __future__ import annotations

from collections.abc import Sequence

from rc1.monitors.state import StepPoint


def recent(steps: Sequence[StepPoint], signal: str, count: int, skip: int = 0) -> list[float] | None:
    """The signal of the `count` most recent steps before the last `skip`, oldest first; None when fewer steps
    recorded it (a window is never read half full)."""
    values = [v for v in (getattr(p, signal) for p in steps) if v is not None]
    end = len(values) - skip
    if end < count:
        return None
    return values[end - count:end]


def window_mean(steps: Sequence[StepPoint], signal: str, window: int, skip: int = 0) -> float | None:
    values = recent(steps, signal, window, skip)
    return None if values is None else sum(values) / len(values)
