"""Over-clarification penalty: probe the reward function the trainer is given (`make_reward_fn`, built from
the run's reward config) with replies that ask 0, 1, 2 and 5 questions back, and with a needed
clarification. The penalty is read off as the weighted scorer components minus the reward, on a medium
item (difficulty factor 1), so it is measured where rewards are aggregated, wiring included.

It passes when the penalty is switched on with α > 0 and cap ≥ 1, the replies are counted as asking
the questions they ask, each penalty is α·min(c, cap), and a needed clarification costs nothing."""

from __future__ import annotations

import math
from collections.abc import Callable

import msgspec

from rc1.checks.result import CheckResult
from rc1.config import RewardConfig
from rc1.data.task import TaskItem
from rc1.scoring.reward import clarification_count
from rc1.scoring.rules import score
from rc1.train.rewards import RewardFn, make_reward_fn

PROBES = {
    0: "The total is 12. Answer: 12",
    1: "Which town do you mean? Answer: 12",
    2: "Which town do you mean? And in which year? Answer: 12",
    5: "Which town? Which year? Which route? Which shop? Which price? Answer: 12",
}
_ITEM = TaskItem(id="probe", task="gsm8k", question="How many?", answer="12", difficulty="medium", prompt="How many?")
_TOLERANCE = 1e-9


def overclar_check(reward: RewardConfig, build: Callable[[RewardConfig, dict[str, float]], RewardFn] = make_reward_fn) -> CheckResult:
    """`build` makes the reward function from the run's reward config, as the train stage does."""
    alpha, cap = reward.overclar_alpha, reward.overclar_cap
    components = sorted(score(_ITEM, PROBES[0]))
    # The penalty is measured net of the components, so any weights serve; equal ones keep it independent
    # of weights.json (which the `weights` check judges).
    weights = {name: 1.0 / len(components) for name in components}
    reward_fn = build(reward, weights)

    def penalty(completion: str, needs_clarification: bool) -> float:
        item = msgspec.structs.replace(_ITEM, needs_clarification=needs_clarification)
        scored = score(item, completion)
        weighted = math.fsum(weights[name] * scored[name] for name in components)
        return round(weighted - reward_fn([item], [completion])[0], 12) + 0.0  # + 0.0: no -0.0 in the report

    measured: dict[str, float] = {"use_overclar_penalty": float(reward.use_overclar_penalty)}
    problems = []
    if not reward.use_overclar_penalty:
        problems.append("reward.use_overclar_penalty is false")
    if alpha <= 0 or cap < 1:
        problems.append(f"alpha {alpha:g} and cap {cap} switch the penalty off (need alpha > 0, cap ≥ 1)")
    for c, completion in PROBES.items():
        counted = float(clarification_count(completion))
        measured[f"counted_c{c}"] = counted
        measured[f"penalty_c{c}"] = penalty(completion, needs_clarification=False)
        if counted != c:
            problems.append(f"a reply asking {c} questions counts {counted:.0f}")
        if abs(measured[f"penalty_c{c}"] - alpha * min(c, cap)) > _TOLERANCE:
            problems.append(f"c = {c}: penalty {measured[f'penalty_c{c}']:g}, expected {alpha * min(c, cap):g}")
    measured["penalty_needed_clarification"] = penalty(PROBES[1], needs_clarification=True)
    if abs(measured["penalty_needed_clarification"]) > _TOLERANCE:
        problems.append(f"a needed clarification is penalized ({measured['penalty_needed_clarification']:g})")
    return CheckResult(
        name="overclar_penalty",
        passed=not problems,
        measured=measured,
        thresholds={"alpha": alpha, "cap": float(cap)},
        detail="; ".join(problems) if problems else
        f"penalty = {alpha:g}·min(c, {cap}): 0, {measured['penalty_c1']:g}, {measured['penalty_c2']:g}, "
        f"{measured['penalty_c5']:g} for c = 0, 1, 2, 5; 0 for a needed clarification",
    )
