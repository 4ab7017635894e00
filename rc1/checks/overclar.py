"""Over-clarification penalty: probe the reward aggregation the trainer uses (`rc1.scoring.reward.total_reward`)
with replies that ask 0, 1, 2 and 5 questions back, and with a needed clarification.

It passes when the penalty is switched on with α > 0 and cap ≥ 1, the replies are counted as asking
the questions they ask, each penalty is α·min(c, cap), and a needed clarification costs nothing."""

from __future__ import annotations

import msgspec

from rc1.checks.result import CheckResult
from rc1.config import RewardConfig
from rc1.data.task import TaskItem
from rc1.scoring.reward import clarification_count, total_reward

PROBES = {
    0: "The total is 12. Answer: 12",
    1: "Which town do you mean? Answer: 12",
    2: "Which town do you mean? And in which year? Answer: 12",
    5: "Which town? Which year? Which route? Which shop? Which price? Answer: 12",
}
_ITEM = TaskItem(id="probe", task="gsm8k", question="How many?", answer="12", difficulty="medium", prompt="How many?")


def overclar_check(reward: RewardConfig) -> CheckResult:
    alpha, cap = reward.overclar_alpha, reward.overclar_cap

    def penalty(completion: str, needs_clarification: bool) -> float:
        item = msgspec.structs.replace(_ITEM, needs_clarification=needs_clarification)
        # With every component 0 and a medium item (difficulty factor 1), the reward is minus the penalty
        # (+ 0.0 turns a -0.0 into 0.0).
        return -total_reward({"probe": 0.0}, {"probe": 1.0}, item, completion, use_penalty=reward.use_overclar_penalty,
                             alpha=alpha, cap=cap, beta=0.0) + 0.0

    measured: dict[str, float] = {"use_overclar_penalty": float(reward.use_overclar_penalty)}
    problems = []
    if not reward.use_overclar_penalty:
        problems.append("reward.use_overclar_penalty is false")
    if alpha <= 0 or cap < 1:
        problems.append(f"alpha {alpha:g} and cap {cap} switch the penalty off (need alpha > 0, cap ≥ 1)")
    for c, completion in PROBES.items():
        measured[f"counted_c{c}"] = float(clarification_count(completion))
        measured[f"penalty_c{c}"] = penalty(completion, needs_clarification=False)
        if measured[f"counted_c{c}"] != c:
            problems.append(f"a reply asking {c} questions counts {measured[f'counted_c{c}']:.0f}")
        if abs(measured[f"penalty_c{c}"] - alpha * min(c, cap)) > 1e-12:
            problems.append(f"c = {c}: penalty {measured[f'penalty_c{c}']:g}, expected {alpha * min(c, cap):g}")
    measured["penalty_needed_clarification"] = penalty(PROBES[1], needs_clarification=True)
    if measured["penalty_needed_clarification"] != 0.0:
        problems.append("a needed clarification is penalized")
    return CheckResult(
        name="overclar_penalty",
        passed=not problems,
        measured=measured,
        thresholds={"alpha": alpha, "cap": float(cap)},
        detail="; ".join(problems) if problems else
        f"penalty = {alpha:g}·min(c, {cap}): 0, {measured['penalty_c1']:g}, {measured['penalty_c2']:g}, "
        f"{measured['penalty_c5']:g} for c = 0, 1, 2, 5; 0 for a needed clarification",
    )

