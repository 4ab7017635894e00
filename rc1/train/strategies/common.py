"""What every torch-engine strategy shares: attaching to the engine, the no-grad log-probabilities of a
rollout under the policy as sampled and under the reference, and the step report."""

from __future__ import annotations

from collections.abc import Iterator

import torch

from rc1.train.metrics import StepMetrics
from rc1.train.policy_math import Rollout, sample_rollout, token_logprobs


class StrategyBase:
    name = ""
    completions_per_prompt = 1

    def __init__(self, train):
        self.train = train
        self.engine = None

    def attach_engine(self, engine) -> None:
        self.engine = engine

    def parameters(self) -> Iterator[torch.nn.Parameter]:
        return iter(())

    def state_dict(self) -> dict:
        return {}

    def load_state_dict(self, state: dict) -> None:
        pass

    def sample(self, items, per_prompt: int) -> tuple[Rollout, torch.Tensor]:
        """`per_prompt` sampled replies to each item's prompt and their rewards."""
        e, t = self.engine, self.train
        rollout = sample_rollout(e.model, e.tokenizer, items, e.prompts_for(items), per_prompt=per_prompt,
                                 max_new_tokens=t.max_completion_tokens, temperature=t.temperature,
                                 eos_ids=e.eos_ids, device=e.device)
        return rollout, e.rewards(rollout)

    def reference_logprobs(self, rollout: Rollout, *, with_reference: bool = True, hidden: bool = False):
        """(π_old log-probs [, hidden states], π_ref log-probs or None), dropout off, no gradient."""
        model, temperature = self.engine.model, self.train.temperature
        was_training = model.training
        model.eval()
        try:
            with torch.no_grad():
                old = token_logprobs(model, rollout, temperature, hidden=hidden)
                ref = None
                if with_reference:
                    with model.disable_adapter():
                        ref = token_logprobs(model, rollout, temperature)
        finally:
            model.train(was_training)
        return (*old, ref) if hidden else (old, ref)


def step_metrics(*, loss: float, kl: float, ratio: float, rewards: torch.Tensor, rollout: Rollout, epochs: int,
                 kl_coef: float) -> StepMetrics:
    """The strategy's part of a step report; the engine fills step, lr, memory and time."""
    return StepMetrics(step=0, loss=float(loss), kl=float(kl), ratio=float(ratio), lr=0.0,
                       reward=float(rewards.mean()), reward_std=float(rewards.std()) if rewards.numel() > 1 else 0.0,
                       mem_used_mb=0.0, sec_per_step=0.0, tokens=int(sum(rollout.counts)), epochs=epochs,
                       kl_coef=float(kl_coef))
