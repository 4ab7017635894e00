"""The scalar reward: weighted scorer components, minus the over-clarification penalty, times the
difficulty factor.

    reward = (Σ_k w_k · component_k − penalty) × (1 + β · (hard − easy))
    penalty = 0 if the item needs clarification, else α · min(c, cap)

where c counts the questions the visible reply asks back (rc1.scoring.rules.clarification_count).
"""

from __future__ import annotations

import math

import msgspec

from rc1.config.schema import RewardConfig
from rc1.core.catalog import LIVE_COMPONENTS
from rc1.data.task import DIFFICULTIES, TaskItem


def overclar_penalty(c: int, needs_clarification: bool, alpha: float, cap: int) -> float:
    return 0.0 if needs_clarification else alpha * min(c, cap)


def difficulty_factor(difficulty: str, beta: float) -> float:
    if difficulty not in DIFFICULTIES:
        raise ValueError(f"unknown difficulty {difficulty!r}; expected easy, medium or hard")
    return 1.0 + beta * ((difficulty == "hard") - (difficulty == "easy"))


def weighted_sum(components: dict[str, float], weights: dict[str, float]) -> float:
    """Σ w_k · component_k. The weights cover exactly the components, but for a live episode's components
    (`LIVE_COMPONENTS`), each counted only where both hold it: a reply scored outside a live episode (`rc1 score` on a
    live run's config) has none, and weights given for other components alone (the overclar probe's) weigh none."""
    if set(weights).difference(LIVE_COMPONENTS) != set(components).difference(LIVE_COMPONENTS):
        raise ValueError(f"weights cover {sorted(weights)} but the scorer gives {sorted(components)}; they must match")
    return math.fsum(weights[k] * components[k] for k in sorted(components) if k in weights)


class RewardParts(msgspec.Struct, frozen=True, kw_only=True):
    weighted: float
    penalty: float
    difficulty_factor: float
    total: float


def reward_parts(
    components: dict[str, float],
    weights: dict[str, float],
    item: TaskItem,
    clarifications: int,
    *,
    use_penalty: bool,
    alpha: float,
    cap: int,
    beta: float,
) -> RewardParts:
    weighted = weighted_sum(components, weights)
    penalty = overclar_penalty(clarifications, item.needs_clarification, alpha, cap) if use_penalty else 0.0
    factor = difficulty_factor(item.difficulty, beta)
    return RewardParts(
        weighted=weighted, penalty=penalty, difficulty_factor=factor, total=(weighted - penalty) * factor
    )


def total_reward(
    components: dict[str, float],
    weights: dict[str, float],
    item: TaskItem,
    clarifications: int,
    *,
    use_penalty: bool,
    alpha: float,
    cap: int,
    beta: float,
) -> float:
    return reward_parts(
        components, weights, item, clarifications, use_penalty=use_penalty, alpha=alpha, cap=cap, beta=beta
    ).total


def configured_parts(
    reward: RewardConfig,
    components: dict[str, float],
    weights: dict[str, float],
    item: TaskItem,
    clarifications: int,
) -> RewardParts:
    """`reward_parts` under the run's `reward` section (penalty on or off, α, cap, β): what the trainer's reward, the
    archive, `rc1 score` and `audit --rescore` each compute, from one place so they cannot drift apart."""
    return reward_parts(
        components,
        weights,
        item,
        clarifications,
        use_penalty=reward.use_overclar_penalty,
        alpha=reward.overclar_alpha,
        cap=reward.overclar_cap,
        beta=reward.difficulty_beta,
    )
