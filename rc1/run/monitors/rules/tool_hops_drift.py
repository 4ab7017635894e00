"""tool_hops_drift: on a live line, the tool results read per episode (tool_hops_per_episode, weighed by episodes)
over the last `window` steps against the line's first full window, trip when it has moved more than `max_change` of
that level either way. Fewer hops: the policy stopped reading the pages and results its answers rest on (it guesses);
more: it loops on calls that add nothing. The rule compares with the line's own start, not with a fixed number, since
how many hops an item takes is the task's (the mix, data.max_tool_hops), not the rule's to know.

The first window's level is carried in the rule's own reading (`measured["baseline_hops"]`): a reading is part of
what a resume rewinds, so a line resumed from a checkpoint compares with the level it had there, and a new line (a
new seed, or a rollback to the start) takes its own. A first window that read nothing (0 hops) sets no level: the
next window that reads some does. A recorded line records no episodes, and the rule never reads it."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta

from rc1.core.runbook import Runbook
from rc1.run.monitors.rules.window import pooled
from rc1.run.monitors.spec import Action, MonitorSpec, RuleParams, SignalPath, its_window
from rc1.run.monitors.state import MonitorState, Reading

NAME = "tool_hops_drift"
# rc1/scoring/episode_stats.py's keys (a layer above this one: tests/unit/test_monitor_tool_use.py holds them equal).
EPISODES = SignalPath("train_step.episodes.episodes", each_step=True, sampled=True)
HOPS = SignalPath("train_step.episodes.tool_hops_per_episode", each_step=True, sampled=True)


class ToolHopsDrift(RuleParams):
    """Tool use drifting on a live line: the tool results read per episode (train_step.episodes
    tool_hops_per_episode, weighed by episodes) over `window` steps, against the line's first window."""

    max_change: Annotated[
        float,
        Meta(
            gt=0.0,
            description="Trips when the window's hops per episode differ from the first window's by more than this "
            "share of it, either way. 0.4: a halving (−50 %) trips on nearly every simulated line within two "
            "windows; simulated healthy lines of ~2 hops an episode read past it on 0.05 % of lines at 16 episodes "
            "a step and none at 64 (docs/monitors-and-runbook.md). A policy that learns a shorter path moves it too: "
            "hence a warn.",
        ),
    ] = 0.4
    window: Annotated[int, Meta(ge=1, description="Steps in each window (the first one and the latest).")] = 10
    action: Annotated[Action, Meta(description="warn, halt or stop (end the line early as complete).")] = "warn"


def read(params: ToolHopsDrift, state: MonitorState) -> Reading | None:
    found = pooled(state.watch.steps, HOPS.path, EPISODES.path, params.window)
    if found is None:
        return None
    hops, episodes = found
    before = state.watch.readings.get(NAME)
    if before is not None and "baseline_hops" in before.measured:
        baseline, since = before.measured["baseline_hops"], before.measured["baseline_step"]
    elif hops > 0:
        baseline, since = hops, float(state.step)  # this window is the line's first level
    else:
        return None  # no tool result read yet: no level to drift from
    change = hops / baseline - 1.0
    breach = abs(change) > params.max_change
    detail = (
        f"{hops:.2f} tool results read per episode over the last {params.window} steps ({episodes:.0f} episodes), "
        f"{change:+.0%} from the {baseline:.2f} of the window ending at step {since:.0f}"
        + (f" (more than {params.max_change:.0%} either way)" if breach else "")
    )
    return Reading(
        step=state.step,
        value=change,
        threshold=params.max_change,
        breach=breach,
        measured={
            "hops_per_episode": hops,
            "episodes": episodes,
            "change": change,
            "baseline_hops": baseline,
            "baseline_step": since,
        },
        thresholds={"max_change": params.max_change},
        window=params.window,
        detail=detail,
    )


SPEC = MonitorSpec(
    name=NAME,
    about="on a live line, tool results read per episode moving away from the line's first window's level",
    params=ToolHopsDrift,
    checked=("step",),
    read=read,
    reads=(HOPS, EPISODES),
    steps_needed=its_window,
    runbook=Runbook(
        means="the policy's tool use has changed since the line began: fewer hops, it answers without reading what "
        "its answer rests on (correctness falls with it) or has learned a shorter path; more, it repeats calls that "
        "add nothing until data.max_tool_rounds cuts it off (unfinished episodes)",
        tries=(
            "compare a step's episodes now and at the line's start: rc1 rollouts --step N (each call and what it read "
            "back)",
            "more hops, episodes cut unfinished at data.max_tool_rounds (scored wrong): look for repeated calls; fewer "
            "hops with correctness falling: the policy guesses",
            "to act on it mid-line, make it a halt (monitors.tool_hops_drift.action: halt; a change of the gated "
            "config) and roll back at the halt: rc1 advance --from best --set train.learning_rate=<lower> --because …",
        ),
    ),
)
