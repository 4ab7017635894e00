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

with warnings.catch_warnings():  # importing trl.experimental says it is experimental; the README says which parts are
    warnings.simplefilter("ignore")
    from trl.experimental.online_dpo import OnlineDPOConfig, OnlineDPOTrainer

from rc1.train.policy_math import reference_drift

REPLIES_PER_PROMPT = 2  # fixed by OnlineDPOTrainer

__all__ = ["MeasuredOnlineDPOTrainer", "OnlineDPOConfig", "OnlineDpoProbe", "REPLIES_PER_PROMPT", "RewardLedger"]


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


class RewardLedger:
    """The rewards and reply lengths rc1's reward function gave since the step began."""

    def __init__(self):
        self.rewards: list[float] = []
        self.lengths: list[int] = []

    def record(self, rewards: list[float], lengths: list[int]) -> None:
        self.rewards.extend(rewards)
        self.lengths.extend(lengths)

    def clear(self) -> None:
        self.rewards, self.lengths = [], []


class OnlineDpoProbe:
    """The step's reward, reply tokens, KL and π_θ/π_ref, read once when the step is logged."""

    def __init__(self, trainer: Callable[[], MeasuredOnlineDPOTrainer], ledger: RewardLedger):
        self._trainer = trainer  # built after the callbacks it is handed
        self._ledger = ledger

    def before_step(self, step: int, model) -> None:
        self._ledger.clear()

    @property
    def measured(self) -> dict[str, float]:
        kl, ratio = self._trainer().take_measured()
        rewards = torch.tensor(self._ledger.rewards, dtype=torch.float64)
        return {"reward": float(rewards.mean()), "reward_std": float(rewards.std()) if rewards.numel() > 1 else 0.0,
                "tokens": float(sum(self._ledger.lengths)), "kl": kl, "ratio": ratio}
