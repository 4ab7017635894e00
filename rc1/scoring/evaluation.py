"""An evaluation of the shadow set, by task × difficulty bucket: success, mean reward, over-clarification
rate, episode turns and the change in success since step 0. Pure: scored replies in, buckets out.

The release metric is `hard_success`: success on the hard HotpotQA and StrategyQA items, the multi-hop
and implicit-reasoning questions the fine-tune is for (seed 003 §4.3).
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from rc1.data.task import DIFFICULTIES, TaskItem
from rc1.events.schema import EvalBucket
from rc1.scoring.pipeline import Scored

RELEASE_TASKS = ("hotpotqa", "strategyqa")
ALL = "all"


def evaluate_buckets(items: Sequence[TaskItem], scored: Sequence[Scored], rewards: Sequence[float],
                     baseline: Sequence[EvalBucket] = ()) -> list[EvalBucket]:
    """Every task × difficulty cell present, each task, each difficulty and the whole set, in that order."""
    rows = list(zip(items, scored, rewards, strict=True))
    tasks = sorted({item.task for item in items})
    groups: list[tuple[str, str]] = [(t, d) for t in tasks for d in DIFFICULTIES]
    groups += [(t, ALL) for t in tasks] + [(ALL, d) for d in DIFFICULTIES] + [(ALL, ALL)]
    before = {(b.task, b.difficulty): b.success for b in baseline}
    buckets = []
    for task, difficulty in groups:
        members = [r for r in rows if task in (ALL, r[0].task) and difficulty in (ALL, r[0].difficulty)]
        if not members:
            continue
        bucket = _bucket(task, difficulty, members)
        if (task, difficulty) in before:
            bucket = msgspec.structs.replace(bucket, delta_pp=100.0 * (bucket.success - before[(task, difficulty)]))
        buckets.append(bucket)
    return buckets


def hard_success(items: Sequence[TaskItem], scored: Sequence[Scored]) -> float:
    hard = [s.components["correctness"] for item, s in zip(items, scored, strict=True)
            if item.difficulty == "hard" and item.task in RELEASE_TASKS]
    return sum(hard) / len(hard) if hard else 0.0


def metric_value(metric: str, hard: float, buckets: Sequence[EvalBucket]) -> float:
    """The value of `release.metric` for one evaluation."""
    if metric == "hard_success":
        return hard
    overall = next(b for b in buckets if b.task == ALL and b.difficulty == ALL)
    return overall.success if metric == "success" else overall.mean_reward


def _bucket(task: str, difficulty: str, members: list[tuple[TaskItem, Scored, float]]) -> EvalBucket:
    n = len(members)
    unneeded = [s for item, s, _ in members if not item.needs_clarification]
    return EvalBucket(
        task=task, difficulty=difficulty, n=n,
        success=sum(s.components["correctness"] for _, s, _ in members) / n,
        mean_reward=sum(r for _, _, r in members) / n,
        overclar_rate=sum(s.clarifications > 0 for s in unneeded) / len(unneeded) if unneeded else 0.0,
        avg_turns=sum(item.user_turns() for item, _, _ in members) / n,
    )
