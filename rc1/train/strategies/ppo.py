"""PPO (Schulman et al., 2017) as RLHF runs it (Ouyang et al., 2022): a value head on the policy's last
hidden state, per-token reward −β·(log π − log π_ref) plus the scorer's reward on the final token, GAE,
whitened advantages, the clipped surrogate and a clipped value loss over up to `train.update_epochs`
passes — stopped early (before the next update) once the approximate KL between the updated policy and
the one that sampled the batch passes 1.5 × `train.target_kl`. TRL 1.x has no PPOTrainer; this is rc1's own."""

from __future__ import annotations

from collections.abc import Iterator

import torch

from rc1.data.task import TaskItem
from rc1.train.metrics import StepMetrics
from rc1.train.policy_math import (
    clipped_surrogate,
    gae,
    joined_mean,
    kl_to_reference,
    masked_mean,
    token_logprobs,
    whiten,
)
from rc1.train.strategies.common import StrategyBase, step_metrics

CLIP_EPSILON = 0.2
VALUE_CLIP = 0.2
VALUE_COEF = 0.1
GAMMA = 1.0  # the reward is given once, at the end of the reply: no discounting within it
LAMBDA = 0.95


class PpoStrategy(StrategyBase):
    def __init__(self, train):
        super().__init__(train)
        self.value_head: torch.nn.Linear | None = None

    def attach_engine(self, engine) -> None:
        super().attach_engine(engine)
        hidden = engine.model.get_base_model().config.hidden_size
        self.value_head = torch.nn.Linear(hidden, 1).to(engine.device)
        torch.nn.init.zeros_(self.value_head.weight)  # V ≡ 0 at first: no value bias before any return is seen
        torch.nn.init.zeros_(self.value_head.bias)

    def parameters(self) -> Iterator[torch.nn.Parameter]:
        return self.value_head.parameters()

    def _values(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.value_head(hidden.float()).squeeze(-1)

    def on_batch(self, items: list[TaskItem]) -> StepMetrics:
        e, t = self.engine, self.train
        rollout, rewards = self.sample(items, t.num_generations)
        old, hidden, ref = self.reference_logprobs(rollout, hidden=True)
        mask = rollout.completion_mask.float()
        with torch.no_grad():
            old_values = self._values(hidden) * mask
            token_rewards = -t.beta * (old - ref) * mask
            last = (torch.tensor(rollout.counts, device=mask.device) - 1).clamp(min=0)
            token_rewards[torch.arange(len(last)), last] += rewards.to(mask.device)
            advantages = gae(token_rewards, old_values, mask, GAMMA, LAMBDA)
            returns = advantages + old_values
            advantages = whiten(advantages, mask)
        total = mask.sum().clamp(min=1)
        epochs, reported = 0, (0.0, 1.0)  # (loss, ratio) of the last pass applied
        for _ in range(t.update_epochs):
            loss_sum, ratio_parts, approx_parts = 0.0, [], []
            for part in e.micro_batches(rollout):
                logprobs, hid = token_logprobs(e.model, rollout.rows(part), t.temperature, hidden=True)
                objective, ratio = clipped_surrogate(logprobs, old[part], advantages[part], CLIP_EPSILON)
                values = self._values(hid)
                clipped = old_values[part] + (values - old_values[part]).clamp(-VALUE_CLIP, VALUE_CLIP)
                value_loss = 0.5 * torch.maximum((values - returns[part]) ** 2, (clipped - returns[part]) ** 2)
                loss = ((-objective + VALUE_COEF * value_loss) * mask[part]).sum() / total
                loss.backward()
                loss_sum += loss.item()
                log_ratio = (logprobs - old[part]).detach()
                ratio_parts.append((ratio.detach(), mask[part]))
                approx_parts.append(((torch.exp(log_ratio) - 1) - log_ratio, mask[part]))
            if epochs and t.target_kl is not None and joined_mean(approx_parts) > 1.5 * t.target_kl:
                e.discard_gradients()
                break  # the updates so far left the region the samples describe: no further pass
            e.optimizer_step()
            epochs += 1
            reported = (loss_sum, joined_mean(ratio_parts))
        kl = float(masked_mean(kl_to_reference(old, ref), mask))
        return step_metrics(
            loss=reported[0],
            kl=kl,
            ratio=reported[1],
            rewards=rewards,
            rollout=rollout,
            epochs=epochs,
            kl_coef=t.beta,
            group=t.num_generations,
        )

    def state_dict(self) -> dict:
        return {"value_head": self.value_head.state_dict()}

    def load_state_dict(self, state: dict) -> None:
        self.value_head.load_state_dict(state["value_head"])
