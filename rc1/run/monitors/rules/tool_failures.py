"""tool_failures: on a live line (data.episodes: live), the share of the rollouts' tool calls that failed, pooled over
the last `window` steps (the window's failed calls over its calls), above `max_share`. A failed call is a result the
model reads, never an exception (a wiki miss, a refused expression, an unknown tool, malformed arguments, TRL's
refusals): every gold path fails none (round 1's live_episodes check), so the failures are the policy's own. A recorded
line records no tool calls, and the rule never reads it."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta

from rc1.core.runbook import Runbook
from rc1.run.monitors.rules.window import pooled_share
from rc1.run.monitors.spec import Action, MonitorSpec, RuleParams, SignalPath, its_window
from rc1.run.monitors.state import MonitorState, Reading

# rc1/scoring/episode_stats.py's keys (a layer above this one: tests/unit/test_monitor_tool_use.py holds them equal).
CALLS = SignalPath("train_step.episodes.tool_calls", each_step=True, sampled=True)
FAILED = SignalPath("train_step.episodes.tool_failure_share", each_step=True, sampled=True)


class ToolFailures(RuleParams):
    """Failing tool calls on a live line: the share of the rollouts' calls that failed (train_step.episodes
    tool_failure_share, weighed by tool_calls), pooled over `window` steps."""

    max_share: Annotated[
        float,
        Meta(
            ge=0.0,
            le=1.0,
            description="Trips when the window's failed calls exceed this share of its calls. 0.5: more of the "
            "policy's calls fail than succeed (gold paths fail none); simulated healthy lines failing 0.2 of their "
            "calls never read above it, lines failing 0.8 trip within a window (docs/monitors-and-runbook.md).",
        ),
    ] = 0.5
    min_calls: Annotated[
        int,
        Meta(ge=1, description="Below this many calls in the window it reads nothing: a share of a handful is noise."),
    ] = 20
    window: Annotated[int, Meta(ge=1, description="Steps in the window.")] = 10
    action: Annotated[Action, Meta(description="warn, halt or stop (end the line early as complete).")] = "warn"


def read(params: ToolFailures, state: MonitorState) -> Reading | None:
    return pooled_share(
        state,
        FAILED.path,
        CALLS.path,
        window=params.window,
        limit=params.max_share,
        below=False,
        min_count=params.min_calls,
        names=("failed_share", "calls"),
        what="tool calls failed",
    )


SPEC = MonitorSpec(
    name="tool_failures",
    about="on a live line, the share of tool calls that failed above a ceiling over a window of steps",
    params=ToolFailures,
    checked=("step",),
    read=read,
    reads=(FAILED, CALLS),
    steps_needed=its_window,
    runbook=Runbook(
        means="the policy calls its tools wrongly more often than rightly: wiki titles no page has, expressions calc "
        "refuses, tools or arguments that do not exist, or wiki before the withheld material was asked for; the reward "
        "does not weigh a call's success enough to teach it",
        tries=(
            "read the failed calls and what they read back: rc1 rollouts --step N (each live episode's calls, ok or "
            "their failure)",
            "reward a call's success: give tool_success a weight in the file reward.weights names (0 when left out)",
            "more rounds to recover from a miss: data.max_tool_rounds (a change of the gated config: the rounds run "
            "again with --accept-changed-inputs)",
        ),
    ),
)
