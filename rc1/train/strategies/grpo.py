"""GRPO (Shao et al., 2024) in rc1's own loop: `num_generations` samples per prompt, advantages normalised
within each prompt's group, the clipped surrogate over `train.update_epochs` passes, β·KL to the reference
(the base model: the adapter switched off), tokens averaged over the whole batch (DAPO's normalisation)."""

from __future__ import annotations

import torch

from rc1.data.task import TaskItem
from rc1.train.metrics import StepMetrics
from rc1.train.policy_math import clipped_surrogate, joined_mean, kl_to_reference, token_logprobs
from rc1.train.strategies.common import AdaptiveKLStrategy, step_metrics

CLIP_EPSILON = 0.2  # PPO's and TRL's default trust region


class GrpoStrategy(AdaptiveKLStrategy):
    def on_batch(self, items: list[TaskItem]) -> StepMetrics:
        e, t = self.engine, self.train
        rollout, rewards = self.sample(items, t.num_generations)
        groups = rewards.view(-1, t.num_generations)
        advantages = ((groups - groups.mean(1, keepdim=True)) / (groups.std(1, keepdim=True) + 1e-4)).view(-1, 1)
        old, ref = self.reference_logprobs(rollout, with_reference=self.kl.beta > 0 or self.kl.target is not None)
        beta, mask, total = self.kl.beta, rollout.completion_mask, rollout.completion_mask.sum().clamp(min=1)
        for _ in range(t.update_epochs):
            loss_sum, kl_parts, ratio_parts = 0.0, [], []
            for part in e.micro_batches(rollout):
                logprobs = token_logprobs(e.model, rollout.rows(part), t.temperature)
                objective, ratio = clipped_surrogate(logprobs, old[part], advantages[part], CLIP_EPSILON)
                kl = kl_to_reference(logprobs, ref[part]) if ref is not None else torch.zeros_like(logprobs)
                loss = ((-(objective - beta * kl)) * mask[part]).sum() / total
                loss.backward()
                loss_sum += loss.item()
                kl_parts.append((kl.detach(), mask[part]))
                ratio_parts.append((ratio.detach(), mask[part]))
            e.optimizer_step()
        kl_mean = joined_mean(kl_parts)
        self.kl.update(kl_mean)
        return step_metrics(
            loss=loss_sum,
            kl=kl_mean,
            ratio=joined_mean(ratio_parts),
            rewards=rewards,
            rollout=rollout,
            epochs=t.update_epochs,
            kl_coef=beta,
            advantages=advantages,
            group=t.num_generations,
        )
