"""no_signal: the share of prompt groups whose replies all scored the same reward, averaged over the last `window`
steps, above `max_share`. GRPO's and RLOO's advantages are differences within a group: a group that ties gives no
gradient, and a run where nearly all tie is spending its steps on nothing."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta

from rc1.core.runbook import Runbook
from rc1.run.monitors.rules.window import share_above
from rc1.run.monitors.spec import Action, MonitorSpec, RuleParams, SignalPath, its_window
from rc1.run.monitors.state import MonitorState, Reading

TIED = SignalPath("train_step.diagnostics.frac_reward_zero_std", each_step=True, sampled=True)


class NoSignal(RuleParams):
    """No learning signal: the share of a step's groups (one prompt's replies) whose rewards all tie
    (train_step.diagnostics.frac_reward_zero_std), averaged over `window` steps."""

    max_share: Annotated[
        float, Meta(ge=0.0, le=1.0, description="Trips when the window's mean share exceeds this.")
    ] = 0.9
    window: Annotated[int, Meta(ge=1, description="Steps in the window.")] = 10
    action: Annotated[Action, Meta(description="warn, halt or stop (end the line early as complete).")] = "halt"


def read(params: NoSignal, state: MonitorState) -> Reading | None:
    return share_above(
        state, TIED.path, params.window, params.max_share, "tied_group_share", "groups had rewards that all tie"
    )


SPEC = MonitorSpec(
    name="no_signal",
    about="the share of prompt groups whose rewards all tie above a ceiling over a window of steps",
    params=NoSignal,
    checked=("step",),
    read=read,
    reads=(TIED,),
    steps_needed=its_window,
    runbook=Runbook(
        means="the items are all too hard or all too easy for the policy now, or its replies have collapsed onto one "
        "answer (see entropy_floor): no group has a better and a worse reply to learn from",
        tries=(
            "sample more replies per prompt, or more widely: --set train.temperature=<higher> (amendable); "
            "train.num_generations goes through the gates again",
            "rebalance what steps train on: priority_sampling (by_difficulty, low_perf_cap)",
            "read a step's groups: rc1 rollouts --step N",
        ),
    ),
)
