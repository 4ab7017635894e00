"""The reward the policy is trained on: weighted rule-scorer components, penalty, difficulty factor."""

from __future__ import annotations

from collections.abc import Callable

from rc1.config import RewardConfig
from rc1.data.task import TaskItem
from rc1.scoring.reward import total_reward
from rc1.scoring.rules import score

RewardFn = Callable[[list[TaskItem], list[str]], list[float]]


def make_reward_fn(reward: RewardConfig, weights: dict[str, float]) -> RewardFn:
    def reward_fn(items: list[TaskItem], completions: list[str]) -> list[float]:
        return [
            total_reward(
                score(item, completion), weights, item, completion,
                use_penalty=reward.use_overclar_penalty, alpha=reward.overclar_alpha,
                cap=reward.overclar_cap, beta=reward.difficulty_beta,
            )
            for item, completion in zip(items, completions, strict=True)
        ]

    return reward_fn
