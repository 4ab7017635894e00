"""Scorer self-check: the live rule scorer must reward every gold reply and refuse a wrong one (a clarification
is the gold reply to an under-specified item; answering it is wrong)."""

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


CLARIFICATION = "Could you share the details this question depends on?"


def _gold(item: TaskItem) -> str:
    return CLARIFICATION if item.needs_clarification else f"Answer: {item.answer}"


def _wrong(item: TaskItem) -> str:
    # Answering an under-specified question, even with the gold answer, is the wrong reply.
    return f"Answer: {item.answer}" if item.needs_clarification else f"Answer: {_wrong_answer(item)}"


def scorer_selfcheck(items: list[TaskItem]) -> CheckResult:
    gold_hits = sum(score(item, _gold(item))["correctness"] >= 1.0 for item in items)
    wrong_hits = sum(score(item, _wrong(item))["correctness"] > 0.0 for item in items)
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
