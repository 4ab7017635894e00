"""RLOO (Ahmadian et al., 2024), as TRL's RLOOTrainer computes it: each sample's reward less β times its
sequence KL to the reference, minus the mean of the *other* samples of its prompt (the leave-one-out
baseline), then the clipped surrogate over `train.update_epochs` passes. β adapts to `train.target_kl`
as GRPO's does."""

from __future__ import annotations

import torch

from rc1.data.task import TaskItem
from rc1.train.metrics import StepMetrics
from rc1.train.policy_math import clipped_surrogate, joined_mean, kl_to_reference, masked_mean, token_logprobs
from rc1.train.strategies.common import AdaptiveKLStrategy, step_metrics
from rc1.train.strategies.grpo import CLIP_EPSILON


def leave_one_out(rewards: torch.Tensor, group: int) -> torch.Tensor:
    """r_i − mean_{j≠i} r_j within each prompt's group of `group` samples."""
    grouped = rewards.view(-1, group)
    others = (grouped.sum(1, keepdim=True) - grouped) / (group - 1)
    return (grouped - others).view(-1)


class RlooStrategy(AdaptiveKLStrategy):
    def on_batch(self, items: list[TaskItem]) -> StepMetrics:
        e, t = self.engine, self.train
        rollout, rewards = self.sample(items, t.num_generations)
        old, ref = self.reference_logprobs(rollout)
        mask = rollout.completion_mask.float()
        beta = self.kl.beta
        sequence_kl = ((old - ref) * mask).sum(1)  # log π_old(y) − log π_ref(y)
        advantages = leave_one_out(rewards - beta * sequence_kl, t.num_generations).unsqueeze(1)
        total = mask.sum().clamp(min=1)
        for _ in range(t.update_epochs):
            loss_sum, ratio_parts = 0.0, []
            for part in e.micro_batches(rollout):
                logprobs = token_logprobs(e.model, rollout.rows(part), t.temperature)
                objective, ratio = clipped_surrogate(logprobs, old[part], advantages[part], CLIP_EPSILON)
                loss = (-objective * mask[part]).sum() / total
                loss.backward()
                loss_sum += loss.item()
                ratio_parts.append((ratio.detach(), mask[part]))
            e.optimizer_step()
        kl = float(masked_mean(kl_to_reference(old, ref), mask))
        self.kl.update(kl)
        return step_metrics(
            loss=loss_sum,
            kl=kl,
            ratio=joined_mean(ratio_parts),
            rewards=rewards,
            rollout=rollout,
            epochs=t.update_epochs,
            kl_coef=beta,
            advantages=advantages,
            group=t.num_generations,
        )
