"""A control arm for the reward (`reward.answers: shuffled`): correctness and f1 are computed against another
item's gold answer of the same task, so a gain that survives it was not earned by answering the items right.

The pairing is a fixed seeded derangement of the training pool within each task (Sattolo's shuffle: one cycle, so no
item keeps its own answer). An item outside the pool (a fresh item of priority sampling) takes the answer of a pool
item of its task chosen by its id. Only training rewards are computed this way; evaluations score every reply
against the item's own gold.
"""

from __future__ import annotations

import hashlib
import random
from collections import defaultdict
from collections.abc import Sequence

import msgspec

from rc1.data.task import TaskItem
from rc1.scoring.pipeline import RewardFn


class ShuffledAnswers:
    def __init__(self, pool: Sequence[TaskItem], seed: int):
        by_task: dict[str, list[TaskItem]] = defaultdict(list)
        for item in sorted(pool, key=lambda item: item.id):
            by_task[item.task].append(item)
        self._answers_of_task = {task: [item.answer for item in items] for task, items in by_task.items()}
        self._answer: dict[str, str] = {}
        for task, items in by_task.items():
            order = list(range(len(items)))
            rng = random.Random(f"shuffled-answers|{seed}|{task}")
            for i in range(len(order) - 1, 0, -1):  # Sattolo: a single cycle, no fixed point
                j = rng.randrange(i)
                order[i], order[j] = order[j], order[i]
            for item, other in zip(items, order):
                self._answer[item.id] = items[other].answer

    def __call__(self, item: TaskItem) -> TaskItem:
        answer = self._answer.get(item.id)
        if answer is None:
            answers = self._answers_of_task.get(item.task)
            if not answers:
                return item
            answer = answers[int(hashlib.sha256(item.id.encode()).hexdigest(), 16) % len(answers)]
        return msgspec.structs.replace(item, answer=answer)


def with_shuffled_answers(reward_fn: RewardFn, pool: Sequence[TaskItem], seed: int) -> RewardFn:
    """`reward_fn` scoring each completion against another item's gold (see the module's docstring)."""
    shuffle = ShuffledAnswers(pool, seed)

    def shuffled(
        items: Sequence[TaskItem],
        completions: Sequence[str],
        completion_tokens: Sequence[int],
        context=None,
        **live,
    ) -> list[float]:
        # `live`: a live rollout's `environments`, which serve the item's own pages; only the gold scored against moves.
        return reward_fn([shuffle(item) for item in items], completions, completion_tokens, context, **live)

    return shuffled
