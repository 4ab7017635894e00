"""What the step rules share: the mean of a signal (the path of a SignalPath the rule declares `each_step`) over the
last `window` steps that record it, and a rate pooled over them by the count it is a rate of (a live line's tool
use, train_step.episodes)."""

from __future__ import annotations

from collections.abc import Sequence

from rc1.run.monitors.state import MonitorState, Reading, StepPoint


def recent(steps: Sequence[StepPoint], signal: str, count: int, skip: int = 0) -> list[float] | None:
    """The signal of the `count` most recent steps before the last `skip`, oldest first; None when fewer steps
    recorded it (a window is never read half full)."""
    # Read back from the newest only as far as the window reaches: every step rule reads it at every step.
    wanted, found = count + skip, []
    for point in reversed(steps):
        value = point.values.get(signal)
        if value is not None:
            found.append(value)
            if len(found) == wanted:
                break
    if len(found) < wanted:
        return None
    return found[: skip - 1 : -1] if skip else found[::-1]


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


def pooled(steps: Sequence[StepPoint], per: str, count: str, window: int) -> tuple[float, float] | None:
    """A rate per `count` pooled over the last `window` steps that record the count (a live line's episodes or tool
    calls, train_step.episodes): Σ per × count / Σ count, so a step of many counts weighs more than a step of few,
    and a step of none adds nothing (its rate is not recorded: a share of nothing is not measured). Returns (the
    pooled rate, Σ count); None where the latest step records no count (every step of a recorded line: told without
    reading the window back), where fewer than `window` steps record it, or where their counts sum to 0."""
    if not steps or steps[-1].values.get(count) is None:
        return None
    points = [p.values for p in steps if p.values.get(count) is not None][-window:]
    if len(points) < window:
        return None
    total = sum(v[count] for v in points)
    if total <= 0:
        return None
    # Each per × count is a whole number (failed calls, episodes that asked, hops): rounded, so no float error adds up.
    return sum(round(v[per] * v[count]) for v in points if v[count]) / total, total


def pooled_share(
    state: MonitorState,
    share: str,
    count: str,
    *,
    window: int,
    limit: float,
    below: bool,
    min_count: int,
    names: tuple[str, str],
    what: str,
) -> Reading | None:
    """A rule on a share pooled over the window (`pooled`), breaching above `limit` (below it where `below`); None
    where the window's count is under `min_count` (a share of a handful is noise, not a level). `names`: the share's
    and the count's names in the reading; `what` says what the share is of ("tool calls failed")."""
    found = pooled(state.watch.steps, share, count, window)
    if found is None or found[1] < min_count:
        return None
    value, total = found
    breach = value < limit if below else value > limit
    bound = "min_share" if below else "max_share"
    detail = f"{value:.0%} of the {total:.0f} {what}, over the last {window} steps" + (
        f" ({'less' if below else 'more'} than {limit:.0%})" if breach else ""
    )
    return Reading(
        step=state.step,
        value=value,
        threshold=limit,
        breach=breach,
        measured={names[0]: value, names[1]: total},
        thresholds={bound: limit, f"min_{names[1]}": float(min_count)},
        window=window,
        detail=detail,
    )
