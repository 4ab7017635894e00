"""What one optimizer step and one evaluation report; engines emit these, stages turn them into events."""

from __future__ import annotations

import msgspec


class StepMetrics(msgspec.Struct, frozen=True, kw_only=True):
    step: int
    loss: float
    kl: float
    ratio: float  # fraction of completion tokens whose policy ratio was clipped
    lr: float
    reward: float  # mean total reward over this step's completions
    reward_std: float
    mem_used_mb: float
    sec_per_step: float
    tokens: int  # completion tokens generated this step


class EvalResult(msgspec.Struct, frozen=True, kw_only=True):
    """Greedy decoding of a fixed item list: `completions[i]` answers `item_ids[i]` in `completion_tokens[i]`
    tokens. Scoring them is the caller's (one scorer call per completion, judge included)."""

    item_ids: list[str]
    completions: list[str]
    completion_tokens: list[int]
    seconds: float
