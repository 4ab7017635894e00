"""never_asking: on a live line, the share of episodes whose item needed a clarification that asked one
(ask_rate_needed, weighed by needed_ask), pooled over the last `window` steps, below `min_share`. An item that needs
an ask and is answered without one is scored wrong (rc1/scoring/episode_outcome.py), so a policy that stopped asking
loses those items whatever it answers. A recorded line records no asks, and the rule never reads it."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta

from rc1.core.runbook import Runbook
from rc1.run.monitors.rules.window import pooled_share
from rc1.run.monitors.spec import Action, MonitorSpec, RuleParams, SignalPath, its_window
from rc1.run.monitors.state import MonitorState, Reading

# rc1/scoring/episode_stats.py's keys (a layer above this one: tests/unit/test_monitor_tool_use.py holds them equal).
NEEDED = SignalPath("train_step.episodes.needed_ask", each_step=True, sampled=True)
ASKED = SignalPath("train_step.episodes.ask_rate_needed", each_step=True, sampled=True)


class NeverAsking(RuleParams):
    """Missing clarification questions on a live line: the share of episodes whose item needed one that asked
    (train_step.episodes ask_rate_needed, weighed by needed_ask), pooled over `window` steps."""

    min_share: Annotated[
        float,
        Meta(
            ge=0.0,
            le=1.0,
            description="Trips when less than this share of the window's episodes that needed a clarification asked "
            "one. 0.3: most such items go unasked (gold paths ask on all). Simulated healthy lines asking on 0.8 "
            "read below it on 0.45 % of lines at 16 episodes a step and none at 64; lines asking on 0.1 trip within "
            "a window or two (docs/monitors-and-runbook.md).",
        ),
    ] = 0.3
    min_episodes: Annotated[
        int,
        Meta(
            ge=1,
            description="Below this many such episodes in the window it reads nothing: they are data.clarify_rate's "
            "share of the episodes (a tenth by default), so a small batch gathers few.",
        ),
    ] = 10
    window: Annotated[int, Meta(ge=1, description="Steps in the window.")] = 10
    action: Annotated[Action, Meta(description="warn, halt or stop (end the line early as complete).")] = "warn"


def read(params: NeverAsking, state: MonitorState) -> Reading | None:
    return pooled_share(
        state,
        ASKED.path,
        NEEDED.path,
        window=params.window,
        limit=params.min_share,
        below=True,
        min_count=params.min_episodes,
        names=("asked_share", "episodes"),
        what="episodes whose item needed a clarification asked one",
    )


SPEC = MonitorSpec(
    name="never_asking",
    about="on a live line, the share of episodes needing a clarification that asked one, below a floor",
    params=NeverAsking,
    checked=("step",),
    read=read,
    reads=(ASKED, NEEDED),
    steps_needed=its_window,
    runbook=Runbook(
        means="the policy answers under-specified items without asking the simulated user, guessing what they "
        "withhold (those answers are scored wrong): the over-clarification penalty on the other items has taught it "
        "that asking costs, or it never learned the ask tool (too few such items to learn from)",
        tries=(
            "read the episodes that needed an ask: rc1 rollouts --step N (an under-specified item's episode with no "
            "ask call)",
            "lighten the penalty: reward.overclar_alpha or reward.overclar_cap (it is 0 on an item that needs an ask, "
            "but a policy that cannot tell the items apart learns never to ask; --accept-changed-inputs)",
            "more such items to learn from: data.clarify_rate (the gated pool is rebuilt: --accept-changed-inputs)",
        ),
    ),
)
