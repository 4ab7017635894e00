"""What one optimizer step and one evaluation report; engines emit these, stages turn them into events."""

from __future__ import annotations

import msgspec


class StepMetrics(msgspec.Struct, frozen=True, kw_only=True):
    step: int
    loss: float
    kl: float
    ratio: float  # mean importance ratio π_θ/π_old over the step's tokens (SFT, DPO: π_θ/π_ref); see README
    lr: float
    reward: float  # mean total reward over this step's completions
    reward_std: float
    mem_used_mb: float
    sec_per_step: float
    tokens: int  # completion tokens generated this step
    epochs: int = 1  # update passes over the batch (PPO stops early at target_kl)
    kl_coef: float = 0.0  # β in force this step (GRPO adapts it to target_kl)


class EvalResult(msgspec.Struct, frozen=True, kw_only=True):
    """Greedy decoding of a fixed item list: `completions[i]` answers `item_ids[i]` in `completion_tokens[i]`
    tokens. Scoring them is the caller's (one scorer call per completion, judge included)."""

    item_ids: list[str]
    completions: list[str]
    completion_tokens: list[int]
    seconds: float
