"""budget: what the run may spend, per line of training and for the whole run: judge calls, judge tokens and their
cost (scorer.price_per_million_*_tokens), accelerator hours and wall hours. Checked after every step and evaluation
against what the next step would add (the largest step's spend in the last `window`, plus the last evaluation's), so
a run halts before it passes a limit, not after."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta

from rc1.core.runbook import Runbook
from rc1.run.monitors.spec import Action, MonitorSpec, RuleParams, SignalPath, its_window
from rc1.run.monitors.spend import SPEND_KEYS, Spend, hours_spend, judge_spend
from rc1.run.monitors.state import MonitorState, Reading

Count = Annotated[int, Meta(ge=0)]
Amount = Annotated[float, Meta(ge=0.0)]


class BudgetLimits(RuleParams):
    """Limits of one scope (a line of training, or the run); null: no limit."""

    judge_calls: Annotated[Count | None, Meta(description="Judge calls (cache hits included).")] = None
    judge_tokens: Annotated[Count | None, Meta(description="Judge tokens, prompt and completion.")] = None
    judge_cost_usd: Annotated[
        Amount | None, Meta(description="Judge cost in USD, at the scorer's price_per_million_*_tokens.")
    ] = None
    accelerator_hours: Annotated[
        Amount | None, Meta(description="Hours of training sessions × processes on CUDA or MPS (0 on a CPU).")
    ] = None
    wall_hours: Annotated[
        Amount | None, Meta(description="Hours of training sessions, from their first event to their last.")
    ] = None


class Budget(RuleParams):
    """What the run may spend. Spend is shown by `rc1 status` whether or not a limit is set."""

    line: Annotated[BudgetLimits, Meta(description="Limits of each line of training (one per run.seeds entry).")] = (
        BudgetLimits()
    )
    run: Annotated[
        BudgetLimits, Meta(description="Limits of the whole run: every line, and the preflight rounds' judge calls.")
    ] = BudgetLimits()
    window: Annotated[int, Meta(ge=1, description="Steps whose largest spend estimates the next step's.")] = 10
    action: Annotated[Action, Meta(description="warn, halt or stop (end the line early as complete).")] = "halt"


def next_step(state: MonitorState, window: int) -> Spend:
    """What the next step may add: the largest judge spend and wall time of the last `window` steps, plus the last
    evaluation's judge spend (one may come next)."""
    steps = state.watch.steps[-window:]
    hours = max((p.wall_seconds for p in steps), default=0.0) / 3600.0
    return (
        judge_spend(
            max((p.judge_calls for p in steps), default=0),
            max((p.judge_tokens for p in steps), default=0),
            max((p.judge_cost_usd for p in steps), default=0.0),
        )
        .plus(hours_spend(hours, state.clock.accelerators))
        .plus(state.last_eval_spend)
    )


def read(params: Budget, state: MonitorState) -> Reading | None:
    ahead = next_step(state, params.window)
    worst: tuple[tuple[bool, float], str, str, float, float] | None = (
        None  # ((passes, share), scope, key, spent, limit)
    )
    for scope, limits, spent in (("line", params.line, state.line_spend), ("run", params.run, state.run_spend)):
        for key in SPEND_KEYS:
            limit = getattr(limits, key)
            if limit is None:
                continue
            total = spent.get(key) + ahead.get(key)
            rank = (total > limit, total / limit if limit else 0.0)  # a limit of 0: nothing may be spent
            if worst is None or rank > worst[0]:
                worst = (rank, scope, key, spent.get(key), float(limit))
    if worst is None:
        return None
    (breach, share), scope, key, spent, limit = worst
    detail = f"{scope} {key} {spent:.4g} of {limit:.4g}, with the next step's {ahead.get(key):.4g}"
    measured = {key: spent, "next_step": ahead.get(key)} | ({"share_of_limit": share} if limit else {})
    return Reading(
        step=state.step,
        value=spent,
        threshold=limit,
        breach=breach,
        measured=measured,
        thresholds={f"{scope}.{key}": limit},
        window=params.window,
        detail=detail + (" would pass the limit" if breach else ""),
    )


SPEC = MonitorSpec(
    name="budget",
    about="judge calls, tokens and cost, accelerator and wall hours, per line and per run: halted before a limit "
    "is passed",
    params=Budget,
    checked=("step", "eval"),
    read=read,
    # The fold counts every event's spend whatever is watched; the budget reads its window's largest step.
    reads=(
        SignalPath("train_step.scoring"),
        SignalPath("train_step.sec_per_step"),
        SignalPath("eval_completed.scoring"),
        SignalPath("eval_completed.seconds"),
        SignalPath("*.ts"),
    ),
    steps_needed=its_window,
    runbook=Runbook(
        means="the run would spend more than it was given: more judge calls per step than planned (cache hits low, "
        "more replies), or slower steps than planned",
        tries=(
            "see what was spent: rc1 status (spend), and the ledger events/<run>.ledger.jsonl",
            "stop the line here and take its best checkpoint to the verdict: rc1 advance --stop --because …",
            "go on past it (the budget stays quiet for this line): rc1 advance --because …; a new limit goes "
            "through the gates again (monitors.budget is part of the config)",
        ),
    ),
)
