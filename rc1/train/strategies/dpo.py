"""Online DPO (Rafailov et al., 2023; Guo et al., 2024) from scored rollouts: `num_generations` samples
per prompt, the best- and worst-scored form a preference pair (prompts whose samples all score the same
give none), and the DPO loss −log σ(β·[(log π − log π_ref)(chosen) − (log π − log π_ref)(rejected)]) with
β = `train.beta`, the reference the base model (adapter off)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from rc1.data.task import TaskItem
from rc1.train.metrics import StepMetrics
from rc1.train.policy_math import Rollout, kl_to_reference, masked_mean, token_logprobs
from rc1.train.strategies.common import StrategyBase, step_metrics


class DpoStrategy(StrategyBase):
    name = "dpo"

    def __init__(self, train):
        super().__init__(train)
        self.completions_per_prompt = train.num_generations

    def on_batch(self, items: list[TaskItem]) -> StepMetrics:
        e, t = self.engine, self.train
        rollout, rewards = self.sample(items, t.num_generations)
        chosen, rejected = preference_pairs(rewards, t.num_generations)
        loss_value, kl, ratio = 0.0, 0.0, 1.0
        if chosen:
            rows = torch.tensor(chosen + rejected)
            pairs = _select(rollout, rows)
            _, ref = self.reference_logprobs(pairs)
            logprobs = token_logprobs(e.model, pairs, t.temperature)
            mask = pairs.completion_mask.float()
            margin = ((logprobs - ref) * mask).sum(1)
            n = len(chosen)
            loss = -F.logsigmoid(t.beta * (margin[:n] - margin[n:])).mean()
            loss.backward()
            loss_value = loss.item()
            kl = float(masked_mean(kl_to_reference(logprobs.detach(), ref), mask))
            ratio = float(masked_mean(torch.exp(logprobs.detach() - ref), mask))  # π_θ/π_ref on the pairs' tokens
        e.optimizer_step()
        return step_metrics(loss=loss_value, kl=kl, ratio=ratio, rewards=rewards, rollout=rollout, epochs=1,
                            kl_coef=t.beta)


def preference_pairs(rewards: torch.Tensor, group: int) -> tuple[list[int], list[int]]:
    """Row indices (chosen, rejected): per prompt its first best- and first worst-scored sample."""
    chosen, rejected = [], []
    for g, scores in enumerate(rewards.view(-1, group).tolist()):
        best, worst = max(scores), min(scores)
        if best > worst:
            chosen.append(g * group + scores.index(best))
            rejected.append(g * group + scores.index(worst))
    return chosen, rejected


def _select(rollout: Rollout, rows: torch.Tensor) -> Rollout:
    index = rows.tolist()
    return Rollout([rollout.items[i] for i in index], rollout.ids[rows], rollout.attention[rows],
                   rollout.completion_mask[rows], [rollout.texts[i] for i in index], [rollout.counts[i] for i in index])
