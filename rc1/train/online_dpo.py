"""trl×dpo: TRL's `OnlineDPOTrainer` (trl.experimental; TRL's `DPOTrainer` is offline, on a fixed
preference dataset, so it cannot learn from the policy's own scored rollouts). Per prompt it samples two
replies, rc1's reward picks the chosen one, and the DPO loss runs against the base model (adapter off).

The trainer logs a sequence-summed KL and no importance ratio; a `train_step` carries the per-token KL
and π_θ/π_ref on the step's sampled tokens, as torch×dpo reports them (rc1/train/strategies/dpo.py),
so this subclass keeps the log-probabilities the trainer computes anyway and measures them."""

from __future__ import annotations

import warnings
from collections.abc import Callable

import torch

# importing trl.experimental says it is experimental; docs/engines-and-strategies.md says which parts are
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from trl.experimental.online_dpo import OnlineDPOConfig, OnlineDPOTrainer

from rc1.train.policy_math import reference_drift

__all__ = ["MeasuredOnlineDPOTrainer", "OnlineDPOConfig", "OnlineDpoProbe", "probe_for"]


class MeasuredOnlineDPOTrainer(OnlineDPOTrainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._forwards: list[tuple[torch.Tensor, torch.Tensor]] = []
        self._drift: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = []

    def _forward(self, model, prompt_ids, prompt_mask, completion_ids, completion_mask, vision_inputs=None):
        logprobs = super()._forward(model, prompt_ids, prompt_mask, completion_ids, completion_mask, vision_inputs)
        self._forwards.append((logprobs.detach(), completion_mask))
        return logprobs

    def training_step(self, model, inputs, num_items_in_batch=None):
        self._forwards = []
        loss = super().training_step(model, inputs, num_items_in_batch)
        (policy, mask), (reference, _) = self._forwards  # the policy's pass, then the reference's
        self._drift.append((policy, reference, mask.float()))
        self._forwards = []
        return loss

    def take_measured(self) -> tuple[float, float]:
        """(KL to the reference, π_θ/π_ref), token means over the micro-batches since the last call."""
        drift, self._drift = self._drift, []
        return reference_drift(drift)


def probe_for(engine, model) -> OnlineDpoProbe:
    """trl×dpo's probe (rc1/registry/strategies/dpo.py): reads the trainer the engine builds after it."""
    return OnlineDpoProbe(lambda: engine.trainer)


class OnlineDpoProbe:
    """The step's reward, reply tokens, KL and π_θ/π_ref, read once when the step is logged: the rewards and
    reply lengths rc1's reward function gave since the step began, the rest from the trainer's own passes."""

    def __init__(self, trainer: Callable[[], MeasuredOnlineDPOTrainer]):
        self._trainer = trainer  # built after the callbacks it is handed
        self._rewards: list[float] = []
        self._lengths: list[int] = []

    def before_step(self, step: int, model) -> None:
        self._rewards, self._lengths = [], []

    def rewarded(self, rewards: list[float], lengths: list[int]) -> None:
        self._rewards.extend(rewards)
        self._lengths.extend(lengths)

    @property
    def measured(self) -> dict[str, float]:
        kl, ratio = self._trainer().take_measured()
        rewards = torch.tensor(self._rewards, dtype=torch.float64)
        return {
            "reward": float(rewards.mean()),
            "reward_std": float(rewards.std()) if rewards.numel() > 1 else 0.0,
            "tokens": float(sum(self._lengths)),
            "kl": kl,
            "ratio": ratio,
        }
