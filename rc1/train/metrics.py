"""What one optimizer step and one evaluation report; engines emit these, stages turn them into events."""

from __future__ import annotations

import msgspec

from rc1.run.monitors.state import Drift
from rc1.scoring.episode_outcome import EpisodeOutcome
from rc1.scoring.episode_record import Episode


class StepMetrics(msgspec.Struct, frozen=True, kw_only=True):
    step: int
    loss: float
    kl: float
    # mean importance ratio π_θ/π_old over the step's tokens (SFT, DPO: π_θ/π_ref); docs/engines-and-strategies.md
    ratio: float
    lr: float
    reward: float  # mean total reward over this step's completions
    reward_std: float
    mem_used_mb: float
    sec_per_step: float
    tokens: int  # completion tokens generated this step
    epochs: int = 1  # update passes over the batch (PPO stops early at target_kl)
    kl_coef: float = 0.0  # β in force this step (GRPO adapts it to target_kl)
    # The trainer's own diagnostics where the engine has them (DIAGNOSTICS names them): what RL users read first
    # when a run goes wrong (entropy collapsing, every group with the same reward, replies cut at the limit).
    diagnostics: dict[str, float] = msgspec.field(default_factory=dict)
    # The advantage the trainer gave each completion of the step, in the order the reward function scored them
    # (TRL's GRPO and RLOO); [] where the engine does not expose them. Archived, not logged as an event field.
    advantages: list[float] = msgspec.field(default_factory=list)
    grad_norm: float | None = None  # the gradient's global L2 norm before clipping (the last update pass's)


# rc1's name -> TRL's logged key (GRPOTrainer and RLOOTrainer log these each step).
DIAGNOSTICS = {
    "entropy": "entropy",
    "clip_ratio": "clip_ratio/region_mean",
    "frac_reward_zero_std": "frac_reward_zero_std",
    "completion_length_mean": "completions/mean_length",
    "completion_length_max": "completions/max_length",
    "clipped_ratio": "completions/clipped_ratio",
    # vLLM rollouts with TRL's importance-sampling correction only: the mean |log p_vLLM − log p_trainer| of the
    # sampled tokens (the sampler_mismatch rule)
    "sampling_logp_difference": "sampling/sampling_logp_difference/mean",
}


class Sampling(msgspec.Struct, frozen=True, kw_only=True):
    """Sampled rather than greedy replies: `samples` per item at `temperature` with the `top_p` and `top_k` cut
    (train.top_p, train.top_k: as the trainers sample), the sampler seeded with `seed` so the same weights give the
    same replies."""

    samples: int
    temperature: float
    seed: int
    top_p: float = 1.0
    top_k: int = 0


class EvalResult(msgspec.Struct, frozen=True, kw_only=True):
    """Replies to a fixed item list, greedy or sampled (`samples` per item, item by item): `completions[i]` answers
    `item_ids[i]` in `completion_tokens[i]` tokens. Scoring them is the caller's."""

    item_ids: list[str]
    completions: list[str]
    completion_tokens: list[int]
    seconds: float
    samples: int = 1
    drift: Drift | None = None  # KL to the step-0 policy over the sampled replies, where it was measured
    generated_here: int = 0  # how many of the replies this process generated (its share, under a launch)
    # Per reply: whether it ended (an end token before max_new_tokens); a reply that did not was cut at the limit.
    ended: list[bool] = msgspec.field(default_factory=list)
    mem_peak_mb: float = 0.0  # the evaluation's peak on the accelerator (CUDA), else the process's RSS peak
    # Live episodes (data.episodes: live): each reply's episode as rc1/scoring/episode_outcome.py reads it, beside its
    # final text in `completions`; None for one-turn replies. The scorer's inputs come from both
    # (rc1/scoring/pipeline.py `evaluated_inputs`).
    outcomes: list[EpisodeOutcome] | None = None
    # …and each one's record (messages and tool calls, rc1/scoring/episode_record.py), which the archive keeps.
    episodes: list[Episode] | None = None
