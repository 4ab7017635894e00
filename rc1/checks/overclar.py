"""Over-clarification penalty: probe the reward function the trainer is given (`make_reward_fn`, built from
the run's reward config and scorer) with replies that ask 0, 1, 2 and 5 questions back, and with a needed
clarification. With thinking on, each reply follows reasoning that asks itself questions, which must not
count. The penalty is read off as the weighted components minus the reward, on a medium item (difficulty
factor 1), so it is measured where rewards are aggregated, wiring included.

It passes when the penalty is switched on with α > 0 and cap ≥ 1, the replies are counted as asking
the questions they ask, each penalty is α·min(c, cap), and a needed clarification costs nothing."""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from rc1.checks.result import CheckResult
from rc1.checks.spec import Check
from rc1.config.schema import RewardConfig
from rc1.core.runbook import Runbook
from rc1.data.task import TaskItem
from rc1.scoring.pipeline import RewardFn, ScoringPipeline, make_reward_fn
from rc1.scoring.reward import weighted_sum

PROBES = {
    0: "The total is 12. Answer: 12",
    1: "Which town do you mean? Answer: 12",
    2: "Which town do you mean? And in which year? Answer: 12",
    5: "Which town? Which year? Which route? Which shop? Which price? Answer: 12",
}
SELF_QUESTIONS = "Is it 16 minus 4? Is that right? Yes, 12.\n</think>\n\n"
_ITEM = TaskItem(id="probe", task="gsm8k", question="How many?", answer="12", difficulty="medium", prompt="How many?")
_TOLERANCE = 1e-9
Build = Callable[[RewardConfig, dict[str, float], ScoringPipeline], RewardFn]


def overclar_check(reward: RewardConfig, pipeline: ScoringPipeline, build: Build = make_reward_fn) -> CheckResult:
    """`pipeline` scores with the run's rule scorer (its thinking mode); `build` makes the reward as training does."""
    alpha, cap = reward.overclar_alpha, reward.overclar_cap
    components = pipeline.rule.components
    # The penalty is measured net of the components, so any weights serve; equal ones keep it independent
    # of weights.json (which the `weights` check judges).
    weights = {name: 1.0 / len(components) for name in components}
    rule_only = ScoringPipeline(pipeline.rule)  # the judge's verdict is a component: it cancels out, so it is not asked
    reward_fn = build(reward, weights, rule_only)
    prefix = SELF_QUESTIONS if pipeline.rule.thinking else ""

    def measure(visible: str, needs_clarification: bool) -> tuple[float, int]:
        item = msgspec.structs.replace(_ITEM, needs_clarification=needs_clarification)
        completion = prefix + visible
        scored = rule_only.score([item], [completion], [len(completion.split())])[0]
        penalty = (
            weighted_sum(scored.components, weights) - reward_fn([item], [completion], [len(completion.split())])[0]
        )
        return round(penalty, 12) + 0.0, scored.clarifications  # + 0.0: no -0.0 in the report

    measured: dict[str, float] = {
        "use_overclar_penalty": float(reward.use_overclar_penalty),
        "thinking": float(pipeline.rule.thinking),
    }
    problems = []
    if not reward.use_overclar_penalty:
        problems.append("reward.use_overclar_penalty is false")
    if alpha <= 0 or cap < 1:
        problems.append(f"alpha {alpha:g} and cap {cap} switch the penalty off (need alpha > 0, cap ≥ 1)")
    for c, visible in PROBES.items():
        penalty, counted = measure(visible, needs_clarification=False)
        measured[f"counted_c{c}"] = float(counted)
        measured[f"penalty_c{c}"] = penalty
        if counted != c:
            problems.append(f"a reply asking {c} questions counts {counted}")
        if abs(penalty - alpha * min(c, cap)) > _TOLERANCE:
            problems.append(f"c = {c}: penalty {penalty:g}, expected {alpha * min(c, cap):g}")
    measured["penalty_needed_clarification"] = measure(PROBES[1], needs_clarification=True)[0]
    if abs(measured["penalty_needed_clarification"]) > _TOLERANCE:
        problems.append(f"a needed clarification is penalized ({measured['penalty_needed_clarification']:g})")
    return CheckResult(
        name="overclar_penalty",
        passed=not problems,
        measured=measured,
        thresholds={"alpha": alpha, "cap": float(cap)},
        detail="; ".join(problems)
        if problems
        else f"penalty = {alpha:g}·min(c, {cap}): 0, {measured['penalty_c1']:g}, {measured['penalty_c2']:g}, "
        f"{measured['penalty_c5']:g} for c = 0, 1, 2, 5; 0 for a needed clarification",
    )


CHECK = Check(
    name="overclar_penalty",
    rounds=(1, 2),
    thresholds={"reward.overclar_alpha": None, "reward.overclar_cap": None},
    run=lambda r: overclar_check(r.config.reward, r.pipeline),
    runbook=Runbook(
        means="the over-clarification penalty is off or miswired: reward.use_overclar_penalty false, "
        "reward.overclar_alpha 0, reward.overclar_cap below 1, or the trainer's reward does not subtract "
        "α·min(c, cap)",
        tries=(
            "switch it on: reward.use_overclar_penalty=true, reward.overclar_alpha > 0, reward.overclar_cap ≥ 1 "
            "(production: exactly 0.07 and 3)",
            "with the switches right, a count or penalty off is a scoring bug: reproduce one probe with rc1 score "
            "--task gsm8k --gold 12 --completion-file F (add --needs-clarification for the needed one)",
        ),
    ),
)
