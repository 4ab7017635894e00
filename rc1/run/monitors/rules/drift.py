"""drift: KL of the policy to the step-0 policy, measured at each evaluation on its sampled replies to the shadow set
(per token, the k3 estimator, averaged per item over its first `replies_per_item` replies, with its interval over
items; the step-0 policy is the base with the LoRA adapter switched off, or a frozen copy of the base for a full
fine-tune: rc1/train/drift.py). Known in every run, β 0 included, where TRL computes no KL. Trips when the interval's
lower bound is above `max_kl` at `window` evaluations in a row."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta

from rc1.core.runbook import Runbook
from rc1.run.monitors.spec import Action, MonitorSpec, RuleParams, SignalPath
from rc1.run.monitors.state import MonitorState, Reading


class DriftRule(RuleParams):
    """Drift from the start: per-token KL of the policy to the step-0 policy on each evaluation's sampled replies
    (eval_completed.drift), with its interval over the shadow items."""

    max_kl: Annotated[
        float, Meta(gt=0.0, description="Trips when the interval's lower bound exceeds this (nats per token).")
    ] = 1.0
    window: Annotated[int, Meta(ge=1, description="Evaluations in a row that must exceed it.")] = 1
    replies_per_item: Annotated[
        int,
        Meta(
            ge=1,
            description="Sampled replies per shadow item it is measured on (of "
            "release.samples): each costs two forward passes; the "
            "per-token KL is heavy-tailed, so fewer read lower in a "
            "typical evaluation.",
        ),
    ] = 1
    action: Annotated[Action, Meta(description="warn, halt or stop (end the line early as complete).")] = "warn"


def read(params: DriftRule, state: MonitorState) -> Reading | None:
    measured = [e.drift for e in state.evals[-params.window :] if e.drift is not None]
    if len(measured) < params.window or not measured:
        return None
    now = measured[-1]
    breach = all(d.low > params.max_kl for d in measured)
    detail = (
        f"KL to the step-0 policy {now.kl:.4f} per token (95 % interval {now.low:.4f} to {now.high:.4f}, "
        f"{now.items} items, {now.tokens} tokens)"
    )
    return Reading(
        step=state.step,
        value=now.kl,
        threshold=params.max_kl,
        breach=breach,
        measured={"kl": now.kl, "ci_low": now.low, "ci_high": now.high, "items": float(now.items)},
        thresholds={"max_kl": params.max_kl},
        window=params.window,
        detail=detail + (f", above {params.max_kl:g} at {params.window} evaluation(s) in a row" if breach else ""),
    )


SPEC = MonitorSpec(
    name="drift",
    about="KL of the policy to the step-0 policy on each evaluation's sampled replies above a ceiling",
    params=DriftRule,
    checked=("eval",),
    read=read,
    reads=(SignalPath("eval_completed.drift"),),
    runbook=Runbook(
        means="the policy has moved far from where it started: with β 0 nothing holds it back, and a large move "
        "without a matching gain on the shadow set is often reward hacking or forgetting",
        tries=(
            "read what changed: rc1 rollouts --eval STEP --worst 5 against rc1 rollouts --eval 0",
            "hold it nearer its start: roll back with --set train.beta=<above 0> --set train.target_kl=<0.02…0.05>",
            "lower the learning rate: --set train.learning_rate=<lower>",
        ),
    ),
)
