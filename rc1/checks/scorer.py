"""Scorer self-check: the live rule scorer must reward every gold answer and refuse a wrong one."""

from __future__ import annotations

from rc1.checks.result import CheckResult
from rc1.data.task import TaskItem
from rc1.scoring.rules import score


def _wrong_answer(item: TaskItem) -> str:
    if item.task == "strategyqa":
        return "no" if item.answer.strip().lower() == "yes" else "yes"
    if item.task == "gsm8k":
        try:
            return str(int(float(item.answer.replace(",", ""))) + 1)
        except ValueError:
            return item.answer + "1"
    return item.answer + " xyzzy"


def scorer_selfcheck(items: list[TaskItem]) -> CheckResult:
    gold_hits = sum(score(item, f"Answer: {item.answer}")["correctness"] >= 1.0 for item in items)
    wrong_hits = sum(score(item, f"Answer: {_wrong_answer(item)}")["correctness"] > 0.0 for item in items)
    n = len(items)
    gold_rate = gold_hits / n if n else 0.0
    wrong_rate = wrong_hits / n if n else 1.0
    passed = n > 0 and gold_rate == 1.0 and wrong_rate == 0.0
    return CheckResult(
        name="scorer_selfcheck",
        passed=passed,
        measured={"items": float(n), "gold_scored_correct": gold_rate, "wrong_scored_correct": wrong_rate},
        thresholds={"gold_scored_correct": 1.0, "wrong_scored_correct": 0.0},
        detail=f"rule scorer on {n} shadow items: gold answers {gold_rate:.3f} correct, wrong answers {wrong_rate:.3f} correct",
    )
