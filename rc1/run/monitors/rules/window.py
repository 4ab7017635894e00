"""What the step rules share: the mean of a signal (the path of a SignalPath the rule declares `each_step`) over the
last `window` steps that record it."""

from __future__ import annotations

from collections.abc import Sequence

from rc1.run.monitors.state import MonitorState, Reading, StepPoint


def recent(steps: Sequence[StepPoint], signal: str, count: int, skip: int = 0) -> list[float] | None:
    """The signal of the `count` most recent steps before the last `skip`, oldest first; None when fewer steps
    recorded it (a window is never read half full)."""
    values = [v for v in (p.values.get(signal) for p in steps) if v is not None]
    end = len(values) - skip
    if end < count:
        return None
    return values[end - count : end]


def window_mean(steps: Sequence[StepPoint], signal: str, window: int, skip: int = 0) -> float | None:
    values = recent(steps, signal, window, skip)
    return None if values is None else sum(values) / len(values)


def share_above(
    state: MonitorState, signal: str, window: int, max_share: float, name: str, what: str
) -> Reading | None:
    """A rule on the window's mean of a share (`signal`, a share of each step's replies or groups), breaching above
    `max_share`; `what` says what the share is of ("replies … cut at the length limit")."""
    share = window_mean(state.watch.steps, signal, window)
    if share is None:
        return None
    breach = share > max_share
    detail = f"{share:.0%} of the {what} over the last {window} steps" + (
        f" (more than {max_share:.0%})" if breach else ""
    )
    return Reading(
        step=state.step,
        value=share,
        threshold=max_share,
        breach=breach,
        measured={name: share},
        thresholds={"max_share": max_share},
        window=window,
        detail=detail,
    )
