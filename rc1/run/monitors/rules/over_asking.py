"""over_asking: on a live line, the share of episodes whose item needed no clarification that asked one anyway
(ask_rate_not_needed, weighed by needed_no_ask), pooled over the last `window` steps, above `max_share`. Each needless
ask costs the over-clarification penalty (reward.overclar_alpha); a policy that asks on most items has learned that a
question is cheaper than a wrong answer. A recorded line records no asks, and the rule never reads it."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta

from rc1.core.runbook import Runbook
from rc1.run.monitors.rules.window import pooled_share
from rc1.run.monitors.spec import Action, MonitorSpec, RuleParams, SignalPath, its_window
from rc1.run.monitors.state import MonitorState, Reading

# rc1/scoring/episode_stats.py's keys (a layer above this one: tests/unit/test_monitor_tool_use.py holds them equal).
NOT_NEEDED = SignalPath("train_step.episodes.needed_no_ask", each_step=True, sampled=True)
ASKED = SignalPath("train_step.episodes.ask_rate_not_needed", each_step=True, sampled=True)


class OverAsking(RuleParams):
    """Needless clarification questions on a live line: the share of episodes whose item needed none that asked one
    (train_step.episodes ask_rate_not_needed, weighed by needed_no_ask), pooled over `window` steps."""

    max_share: Annotated[
        float,
        Meta(
            ge=0.0,
            le=1.0,
            description="Trips when more than this share of the window's episodes that needed no clarification asked "
            "one. 0.3: three times the 0.1 assumed healthy, half the 0.6 of a fault; simulated healthy lines never "
            "read above it, faulty ones trip within a window (docs/monitors-and-runbook.md).",
        ),
    ] = 0.3
    min_episodes: Annotated[
        int,
        Meta(
            ge=1,
            description="Below this many such episodes in the window it reads nothing: a share of a handful is noise.",
        ),
    ] = 20
    window: Annotated[int, Meta(ge=1, description="Steps in the window.")] = 10
    action: Annotated[Action, Meta(description="warn, halt or stop (end the line early as complete).")] = "warn"


def read(params: OverAsking, state: MonitorState) -> Reading | None:
    return pooled_share(
        state,
        ASKED.path,
        NOT_NEEDED.path,
        window=params.window,
        limit=params.max_share,
        below=False,
        min_count=params.min_episodes,
        names=("asked_share", "episodes"),
        what="episodes whose item needed no clarification asked one anyway",
    )


SPEC = MonitorSpec(
    name="over_asking",
    about="on a live line, the share of episodes needing no clarification that asked one, above a ceiling",
    params=OverAsking,
    checked=("step",),
    read=read,
    reads=(ASKED, NOT_NEEDED),
    steps_needed=its_window,
    runbook=Runbook(
        means="the policy asks the simulated user on items that say everything already: the over-clarification "
        "penalty is too light against what an ask buys (the material an under-specified item withholds), so asking "
        "first has become the safe habit",
        tries=(
            "read the needless asks: rc1 rollouts --step N (each live episode's ask calls and what the user said)",
            "weigh the penalty more: reward.overclar_alpha (per question) or reward.overclar_cap, with "
            "reward.use_overclar_penalty on (a change of the gated config: --accept-changed-inputs)",
            "check data.clarify_rate: the more items need an ask, the more the policy learns to ask everywhere",
        ),
    ),
)
