"""Round 2's `component_spread`: does each reward component vary over the base model's shadow run?

A component that gives every reply the same score adds the same to every reward in a group: GRPO's advantage, the
reward less its group's mean, never sees it, and its share of the weights is dead weight. Measured on the replies of
round 2's shadow run (the base model, `shadow.samples` per shadow item, scored by the run's scorer): each weighted
component's lowest and highest score, its standard deviation, and the share of items over which it varies within
their samples (what a group would see). A reward function or reward model of yours (`reward.functions`) that is
constant fails the round, unless its entry says `constant_ok: true` (it is then noted); a built-in component
that is constant is noted, not failed: correctness constant at step 0 means a base model that never succeeds yet, which
round 2's thinking_fits measures. TRL's own functions have known reasons to be constant, said with the name. Pure:
components in, a CheckResult out (rc1/app/shadow_run.py runs it)."""

from __future__ import annotations

import math

from rc1.checks.result import CheckResult
from rc1.core.runbook import Runbook

# Why one of TRL's reward functions (trl.rewards) gives one score to every reply, by its path's function name.
KNOWN_CONSTANT = {
    "think_format_reward": "it wants the reply to open with <think>: a model whose chat template opens it (as "
    "Qwen3-4B-Thinking-2507's does), or one that does not think, never does",
    "accuracy_reward": "it reads a LaTeX answer ($42$, \\boxed{42}) and the gold as LaTeX: a reply that writes "
    "`Answer: 42` scores 0",
    "reasoning_accuracy_reward": "it reads a LaTeX answer after the reasoning: a reply without one scores 0",
    "get_repetition_penalty_reward": "it is 0 until an n-gram repeats: short replies never repeat one",
    "get_soft_overlong_punishment": "it is 0 below max_completion_len - soft_punish_cache tokens",
}


def component_spread(
    components: list[dict[str, float]],
    samples: int,
    weights: dict[str, float],
    yours: dict[str, str],
    allowed: list[str],
) -> CheckResult:
    """`components`: each reply's scores, item by item (`samples` per item); `yours`: your components' names -> the
    function or model they come from."""
    measured: dict[str, float] = {"replies": float(len(components)), "samples": float(samples)}
    constant, noted = [], []
    for name in sorted(weights):
        if weights[name] <= 0:
            continue
        values = [c[name] for c in components if name in c]
        if not values:
            continue
        low, high = min(values), max(values)
        mean = math.fsum(values) / len(values)
        groups = [values[i : i + samples] for i in range(0, len(values), samples)]
        measured |= {
            f"{name}.min": low,
            f"{name}.max": high,
            f"{name}.sd": math.sqrt(math.fsum((v - mean) ** 2 for v in values) / len(values)),
            f"{name}.groups_varying": sum(max(g) > min(g) for g in groups) / len(groups),
        }
        if high - low > 1e-9:
            continue
        why = _why(yours.get(name))
        said = f"{name} is {low:g} on every reply (weight {weights[name]:g})" + (f": {why}" if why else "")
        (constant if name in yours and name not in allowed else noted).append(said)
    measured["constant"] = float(len(constant))
    parts = []
    if constant:
        parts.append(
            "constant over the base model's shadow run, a share of the reward no advantage sees: " + "; ".join(constant)
        )
    if noted:
        parts.append("noted: " + "; ".join(noted))
    return CheckResult(
        name="component_spread",
        passed=not constant,
        measured=measured,
        thresholds={"min_range": 1e-9},
        detail=" — ".join(parts) or f"every weighted component varies over the {len(components)} replies",
    )


def _why(source: str | None) -> str:
    if source is None:
        return ""
    name = source.rpartition(":")[2]
    return KNOWN_CONSTANT.get(name, "")


RUNBOOK = Runbook(
    means="a reward function or model of yours gives every reply of the base model the same score, so its weight is "
    "dead: GRPO's advantage compares replies within a group and never sees a constant",
    tries=(
        "read what the detail says of it (TRL's functions have conventions: think_format_reward wants a reply that "
        "opens <think>, accuracy_reward a LaTeX answer); fix the function or the data it reads, or drop it and its "
        "weight",
        "a function that only varies once the policy has learned something (a length penalty near the limit): "
        "constant_ok: true in its reward.functions entry notes it instead",
        "read the replies it scored: reports/shadow_run_pre_run_check.json and rc1 rollouts --eval 0",
    ),
)
