"""An evaluation of the shadow set, by task × difficulty bucket: success (greedy, and averaged over sampled
replies), mean reward, over-clarification rate, episode turns and the change in success since step 0. Pure:
scored replies in, buckets out.

The release question (seed 003 §4.3) is about the hard items of `release.tasks` (HotpotQA and StrategyQA by
default: the multi-hop and implicit-reasoning questions the fine-tune is for): `hard_success` on the shadow set
is what `best/` may be promoted on; the verdict itself is measured on the gate set (rc1/app/release.py).
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from rc1.data.task import DIFFICULTIES, TaskItem
from rc1.run.events import EvalBucket
from rc1.run.verdicts import ALL
from rc1.scoring.pipeline import Scored


def evaluate_buckets(
    items: Sequence[TaskItem],
    scored: Sequence[Scored],
    rewards: Sequence[float],
    baseline: Sequence[EvalBucket] = (),
    sampled: Sequence[float] | None = None,
) -> list[EvalBucket]:
    """Every task × difficulty cell present, each task, each difficulty and the whole set, in that order.
    `sampled[i]`: item i's success averaged over its sampled replies (absent: no sampled figures)."""
    rows = list(zip(items, scored, rewards, sampled if sampled is not None else [None] * len(items), strict=True))
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


def hard_items(items: Sequence[TaskItem], tasks: Sequence[str]) -> list[int]:
    """Indices of the items the release question is about: hard items of `tasks`."""
    return [i for i, item in enumerate(items) if item.difficulty == "hard" and item.task in tasks]


def hard_success(items: Sequence[TaskItem], success: Sequence[float], tasks: Sequence[str]) -> float | None:
    """Mean of `success` (per item: 1/0 greedy, or a sampled rate) over the hard items of `tasks`; None without any."""
    hard = hard_items(items, tasks)
    return sum(success[i] for i in hard) / len(hard) if hard else None


def _bucket(task: str, difficulty: str, members: list[tuple[TaskItem, Scored, float, float | None]]) -> EvalBucket:
    n = len(members)
    unneeded = [s for item, s, _, _ in members if not item.needs_clarification]
    sampled = [rate for _, _, _, rate in members if rate is not None]
    return EvalBucket(
        task=task,
        difficulty=difficulty,
        n=n,
        success=sum(s.components["correctness"] for _, s, _, _ in members) / n,
        mean_reward=sum(r for _, _, r, _ in members) / n,
        overclar_rate=sum(s.clarifications > 0 for s in unneeded) / len(unneeded) if unneeded else 0.0,
        avg_turns=sum(item.user_turns() for item, _, _, _ in members) / n,
        sampled_success=sum(sampled) / n if len(sampled) == n else None,
    )
