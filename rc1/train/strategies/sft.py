"""SFT on gold replies (`Answer: <gold>`, or the clarification question), loss on the reply's tokens —
the warm start's objective as a strategy. The step's reward is that of one sampled reply per prompt,
drawn before the update, so curves compare across strategies."""

from __future__ import annotations

import torch

from rc1.data.task import TaskItem
from rc1.scoring.rules import gold_reply
from rc1.train.metrics import StepMetrics
from rc1.train.policy_math import Rollout, reference_drift, teacher_rollout, token_logprobs
from rc1.train.strategies.common import StrategyBase, step_metrics


class SftStrategy(StrategyBase):
    def on_batch(self, items: list[TaskItem]) -> StepMetrics:
        e, t = self.engine, self.train
        prompts = e.prompts_for(items)
        sampled, rewards = self.sample(items, 1)
        gold = gold_rollout(e.tokenizer, items, prompts, e.eos_ids, e.device)
        _, ref = self.reference_logprobs(gold)
        mask = gold.completion_mask.float()
        total = mask.sum().clamp(min=1)
        loss_sum, parts = 0.0, []
        for part in e.micro_batches(gold):
            logprobs = token_logprobs(e.model, gold.rows(part), t.temperature)
            loss = -(logprobs * mask[part]).sum() / total
            loss.backward()
            loss_sum += loss.item()
            parts.append(logprobs.detach())
        e.optimizer_step()
        kl, ratio = reference_drift([(torch.cat(parts), ref, mask)])
        return step_metrics(loss=loss_sum, kl=kl, ratio=ratio, rewards=rewards, rollout=sampled, epochs=1, kl_coef=0.0)


def gold_rollout(tokenizer, items: list[TaskItem], prompts: list[str], eos_ids: list[int], device) -> Rollout:
    """Each prompt followed by its item's gold reply: what SFT trains on (and trl×sft's probe measures)."""
    return teacher_rollout(tokenizer, items, prompts, [gold_reply(item) for item in items], eos_ids, device)
