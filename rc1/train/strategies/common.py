"""What every torch-engine strategy shares: attaching to the engine, the no-grad log-probabilities of a
rollout under the policy as sampled and under the reference, and the step report."""

from __future__ import annotations

from collections.abc import Iterator

import torch

from rc1.train.metrics import StepMetrics
from rc1.train.policy_math import Rollout, sample_rollout, token_logprobs
from rc1.train.strategies.adaptive_kl import AdaptiveKL


class StrategyBase:
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
        rollout = sample_rollout(
            e.model,
            e.tokenizer,
            items,
            e.prompts_for(items),
            per_prompt=per_prompt,
            max_new_tokens=t.max_completion_tokens,
            temperature=t.temperature,
            top_p=t.top_p,
            top_k=t.top_k,
            eos_ids=e.eos_ids,
            device=e.device,
        )
        return rollout, e.rewards(rollout)

    def reference_logprobs(self, rollout: Rollout, *, with_reference: bool = True, hidden: bool = False):
        """(π_old log-probs [, hidden states], π_ref log-probs or None), dropout off, no gradient."""
        model, temperature = self.engine.model, self.train.temperature
        was_training = model.training
        olds, hiddens, refs = [], [], []
        model.eval()
        try:
            with torch.no_grad():
                for part in self.engine.micro_batches(rollout):  # memory bounded as the training passes are
                    rows = rollout.rows(part)
                    old = token_logprobs(model, rows, temperature, hidden=hidden)
                    olds.append(old[0] if hidden else old)
                    if hidden:
                        hiddens.append(old[1])
                    if with_reference:
                        with model.disable_adapter():
                            refs.append(token_logprobs(model, rows, temperature))
        finally:
            model.train(was_training)
        ref = torch.cat(refs) if with_reference else None
        return (torch.cat(olds), torch.cat(hiddens), ref) if hidden else (torch.cat(olds), ref)


class AdaptiveKLStrategy(StrategyBase):
    """A KL coefficient β that adapts to `train.target_kl` (GRPO, RLOO); β is the strategy's checkpointed
    state."""

    def __init__(self, train):
        super().__init__(train)
        self.kl = AdaptiveKL(train.beta, train.target_kl)

    def state_dict(self) -> dict:
        return {"kl": self.kl.state_dict()}

    def load_state_dict(self, state: dict) -> None:
        self.kl.load_state_dict(state["kl"])


def step_metrics(
    *,
    loss: float,
    kl: float,
    ratio: float,
    rewards: torch.Tensor,
    rollout: Rollout,
    epochs: int,
    kl_coef: float,
    advantages: torch.Tensor | None = None,
    group: int | None = None,
) -> StepMetrics:
    """The strategy's part of a step report; the engine fills step, lr, memory and time. `advantages`: one per
    completion, in the order they were scored (GRPO's, RLOO's), for the rollout archive; `group`: replies per prompt
    (the share of groups whose rewards tie)."""
    return StepMetrics(
        step=0,
        loss=float(loss),
        kl=float(kl),
        ratio=float(ratio),
        lr=0.0,
        reward=float(rewards.mean()),
        reward_std=float(rewards.std()) if rewards.numel() > 1 else 0.0,
        mem_used_mb=0.0,
        sec_per_step=0.0,
        tokens=int(sum(rollout.counts)),
        epochs=epochs,
        kl_coef=float(kl_coef),
        diagnostics=sample_diagnostics(rollout, rewards, group),
        advantages=[] if advantages is None else [float(a) for a in advantages.reshape(-1)],
    )


def sample_diagnostics(rollout: Rollout, rewards: torch.Tensor, group: int | None) -> dict[str, float]:
    """What rc1's own loop measures of TRL's diagnostics (rc1/train/metrics.py DIAGNOSTICS): the completions' length,
    the sampled tokens' entropy, the share cut at the length limit, and the share of groups whose rewards tie."""
    counts = [int(c) for c in rollout.counts]
    found = (
        {"completion_length_mean": sum(counts) / len(counts), "completion_length_max": float(max(counts))}
        if counts
        else {}
    )
    if rollout.mean_entropy is not None:
        found["entropy"] = rollout.mean_entropy
    if rollout.clipped_share is not None:
        found["clipped_ratio"] = rollout.clipped_share
    if group and rewards.numel() >= group:
        grouped = rewards.view(-1, group)
        found["frac_reward_zero_std"] = float((grouped.max(1).values == grouped.min(1).values).float().mean())
    return found
