"""The scalar reward: weighted rule-scorer components, minus the over-clarification penalty, times
the difficulty factor.

    reward = (Σ_k w_k · component_k − penalty) × (1 + β · (hard − easy))
    penalty = 0 if the item needs clarification, else α · min(c, cap)

where c counts the questions the completion asks back.
"""

from __future__ import annotations

import math

from rc1.checks.text import SENTENCE_BREAK
from rc1.data.task import TaskItem

_CLOSERS = "\"')]}»”’*_`"


def clarification_count(completion: str) -> int:
    """Sentences ending in `?` in what the user sees.

    A reasoning model's thinking ("Wait, is 12 right?") asks nobody anything, so only the text after
    the last `</think>` counts (or, with an unclosed `<think>`, the text before it).
    """
    if "</think>" in completion:
        visible = completion.rsplit("</think>", 1)[1]
    else:
        visible = completion.split("<think>", 1)[0]
    sentences = (s.strip().rstrip(_CLOSERS) for s in SENTENCE_BREAK.split(visible))
    return sum(1 for s in sentences if s.endswith("?") and any(ch.isalnum() for ch in s))


def overclar_penalty(c: int, needs_clarification: bool, alpha: float, cap: int) -> float:
    return 0.0 if needs_clarification else alpha * min(c, cap)


def difficulty_factor(difficulty: str, beta: float) -> float:
    if difficulty not in ("easy", "medium", "hard"):
        raise ValueError(f"unknown difficulty {difficulty!r}; expected easy, medium or hard")
    return 1.0 + beta * ((difficulty == "hard") - (difficulty == "easy"))


def total_reward(
    components: dict[str, float], weights: dict[str, float], item: TaskItem, completion: str,
    *, use_penalty: bool, alpha: float, cap: int, beta: float,
) -> float:
    if set(weights) != set(components):
        raise ValueError(
            f"weights cover {sorted(weights)} but the scorer gives {sorted(components)}; they must match"
        )
    weighted = math.fsum(weights[k] * components[k] for k in sorted(components))
    penalty = overclar_penalty(clarification_count(completion), item.needs_clarification, alpha, cap) if use_penalty else 0.0
    return (weighted - penalty) * difficulty_factor(item.difficulty, beta)
