"""Online DPO (Rafailov et al., 2023; Guo et al., 2024) from scored rollouts: `num_generations` samples
per prompt, the best- and worst-scored form a preference pair (prompts whose samples all score the same
give none), and the DPO loss −log σ(β·[(log π − log π_ref)(chosen) − (log π − log π_ref)(rejected)]) with
β = `train.beta`, the reference the base model (adapter off)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from rc1.data.task import TaskItem
from rc1.train.metrics import StepMetrics
from rc1.train.policy_math import Rollout, reference_drift, token_logprobs
from rc1.train.strategies.common import StrategyBase, step_metrics


class DpoStrategy(StrategyBase):
    def on_batch(self, items: list[TaskItem]) -> StepMetrics:
        e, t = self.engine, self.train
        rollout, rewards = self.sample(items, t.num_generations)
        chosen, rejected = preference_pairs(rewards, t.num_generations)
        loss_value, kl, ratio = 0.0, 0.0, 1.0
        if chosen:
            # rows interleaved chosen, rejected, chosen, …: a micro-batch of even length holds whole pairs
            rows = torch.tensor([row for pair in zip(chosen, rejected) for row in pair])
            pairs = _select(rollout, rows)
            _, ref = self.reference_logprobs(pairs)
            mask = pairs.completion_mask.float()
            drift = []
            for part in _pair_slices(e.micro_batches(pairs)):
                logprobs = token_logprobs(e.model, pairs.rows(part), t.temperature)
                margin = ((logprobs - ref[part]) * mask[part]).sum(1)
                loss = -F.logsigmoid(t.beta * (margin[0::2] - margin[1::2])).sum() / len(chosen)
                loss.backward()
                loss_value += loss.item()
                drift.append((logprobs.detach(), ref[part], mask[part]))
            kl, ratio = reference_drift(drift)
        e.optimizer_step()
        return step_metrics(
            loss=loss_value,
            kl=kl,
            ratio=ratio,
            rewards=rewards,
            rollout=rollout,
            epochs=1,
            kl_coef=t.beta,
            group=t.num_generations,
        )


def preference_pairs(rewards: torch.Tensor, group: int) -> tuple[list[int], list[int]]:
    """Row indices (chosen, rejected): per prompt its first best- and first worst-scored sample."""
    chosen, rejected = [], []
    for g, scores in enumerate(rewards.view(-1, group).tolist()):
        best, worst = max(scores), min(scores)
        if best > worst:
            chosen.append(g * group + scores.index(best))
            rejected.append(g * group + scores.index(worst))
    return chosen, rejected


def _pair_slices(slices: list[slice]) -> list[slice]:
    """The engine's micro-batches, widened to even bounds so no pair is split."""
    bounds = sorted({(s.start + 1) // 2 * 2 for s in slices} | {slices[-1].stop})
    return [slice(a, b) for a, b in zip(bounds, bounds[1:]) if b > a]


def _select(rollout: Rollout, rows: torch.Tensor) -> Rollout:
    index = rows.tolist()
    return Rollout(
        [rollout.items[i] for i in index],
        rollout.ids[rows],
        rollout.attention[rows],
        rollout.completion_mask[rows],
        [rollout.texts[i] for i in index],
        [rollout.counts[i] for i in index],
    )
