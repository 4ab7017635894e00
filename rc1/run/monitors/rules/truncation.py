"""truncation: the share of replies cut at `train.max_completion_tokens` (no end token), averaged over the last
`window` steps, above `max_share`. A cut reply has no final answer: the reward scores a fragment, and a thinking
model whose `<think>` is still open has said nothing at all."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta

from rc1.core.runbook import Runbook
from rc1.run.monitors.rules.window import share_above
from rc1.run.monitors.spec import Action, MonitorSpec, RuleParams, SignalPath, its_window
from rc1.run.monitors.state import MonitorState, Reading

CUT = SignalPath("train_step.diagnostics.clipped_ratio", each_step=True, sampled=True)


class Truncation(RuleParams):
    """Replies running into the length limit: the share of a step's sampled replies with no end token before
    train.max_completion_tokens (train_step.diagnostics.clipped_ratio), averaged over `window` steps."""

    max_share: Annotated[
        float, Meta(ge=0.0, le=1.0, description="Trips when the window's mean share exceeds this.")
    ] = 0.5
    window: Annotated[int, Meta(ge=1, description="Steps in the window.")] = 10
    action: Annotated[Action, Meta(description="warn, halt or stop (end the line early as complete).")] = "warn"


def read(params: Truncation, state: MonitorState) -> Reading | None:
    return share_above(
        state, CUT.path, params.window, params.max_share, "truncated_share", "replies were cut at the length limit"
    )


SPEC = MonitorSpec(
    name="truncation",
    about="the share of replies cut at max_completion_tokens above a ceiling over a window of steps",
    params=Truncation,
    checked=("step",),
    read=read,
    reads=(CUT,),
    steps_needed=its_window,
    runbook=Runbook(
        means="replies run into train.max_completion_tokens before they answer: the limit is too short for the "
        "task's reasoning, or the policy learned to ramble (a length reward, a weak end-of-reply habit)",
        tries=(
            "raise the limit (a change of the gated config: the rounds run again): --set "
            "train.max_completion_tokens=<higher> --accept-changed-inputs",
            "read the cut replies: rc1 rollouts --step N --worst 5",
            "weigh the length component more (reward.weights) or lower reward.overlong_cache_fraction",
        ),
    ),
)
