"""What TRL's SFTTrainer does not report and a `train_step` carries: before each optimizer step, the
reward of the policy's own sampled reply to each of the step's prompts, and π_θ/π_ref (and the KL) on
the step's gold tokens — the torch engine's sft reports the same (rc1/train/strategies/sft.py)."""

from __future__ import annotations

import copy
from collections.abc import Callable

import torch

from rc1.data.task import TaskItem
from rc1.scoring.functions import BatchContext, StepState
from rc1.train.policy_math import reference_drift, sample_rollout, token_logprobs
from rc1.train.protocols import RewardFn
from rc1.train.strategies.sft import gold_rollout


def probe_for(engine, model) -> SftProbe:
    """trl×sft's probe (rc1/registry/strategies/sft.py), on the engine's batches and prompts. Full fine-tuning
    has no adapter to switch off: the reference is then a frozen copy of the start."""
    reference = copy.deepcopy(model).eval().requires_grad_(False) if engine.config.finetune.method == "full" else None
    return SftProbe(
        engine.sampler.batch,
        engine.prompts_for,
        engine.tokenizer,
        engine.reward_fn,
        engine.eos_ids,
        engine.config.train,
        engine.device,
        reference,
    )


class SftProbe:
    def __init__(
        self,
        items_of_step: Callable[[int], list[TaskItem]],
        prompts_for: Callable[[list[TaskItem]], list[str]],
        tokenizer,
        reward_fn: RewardFn,
        eos_ids: list[int],
        train,
        device: str,
        reference: torch.nn.Module | None = None,
    ):
        """`reference`: the policy training started from, where it is not the model with its adapter off
        (`finetune.method` full)."""
        self._items_of_step = items_of_step
        self._prompts_for = prompts_for
        self._tokenizer = tokenizer
        self._reward_fn = reward_fn
        self._eos_ids = eos_ids
        self._train = train
        self._device = device
        self._reference = reference
        self.measured: dict[str, float] = {}

    def rewarded(self, rewards: list[float], lengths: list[int]) -> None:
        """SFTTrainer asks rc1's reward function for nothing: the probe samples and scores its own replies."""

    def before_step(self, step: int, model) -> None:
        items = self._items_of_step(step)
        prompts = self._prompts_for(items)
        t = self._train
        sampled = sample_rollout(
            model,
            self._tokenizer,
            items,
            prompts,
            per_prompt=1,
            max_new_tokens=t.max_completion_tokens,
            temperature=t.temperature,
            eos_ids=self._eos_ids,
            device=self._device,
        )
        completion = sampled.ids[:, -sampled.completion_width :]
        context = BatchContext(  # what TRL would hand a reward function of yours (rc1/scoring/functions.py)
            completion_ids=[completion[row, :count].tolist() for row, count in enumerate(sampled.counts)],
            trainer_state=StepState(global_step=step - 1, max_steps=t.max_steps),
        )
        rewards = torch.tensor(
            self._reward_fn(sampled.items, sampled.texts, sampled.counts, context), dtype=torch.float64
        )
        gold = gold_rollout(self._tokenizer, items, prompts, self._eos_ids, self._device)
        was_training = model.training
        model.eval()
        try:
            with torch.no_grad():
                logprobs = token_logprobs(model, gold, t.temperature)
                if self._reference is not None:
                    ref = token_logprobs(self._reference, gold, t.temperature)
                else:
                    with model.disable_adapter():
                        ref = token_logprobs(model, gold, t.temperature)
        finally:
            model.train(was_training)
        kl, ratio = reference_drift([(logprobs, ref, gold.completion_mask.float())])
        self.measured = {
            "reward": float(rewards.mean()),
            "reward_std": float(rewards.std()) if rewards.numel() > 1 else 0.0,
            "tokens": float(sum(sampled.counts)),
            "kl": kl,
            "ratio": ratio,
        }
