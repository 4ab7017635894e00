"""Drift: KL of the policy to the step-0 policy, measured on an evaluation's sampled replies as they are generated.

Each item's first sampled reply is scored by the policy that drew it and by the step-0 policy (a LoRA policy with its
adapter switched off; a fully trained one against a frozen copy of its base), both at the sampling temperature, and
its per-token KL is the k3 estimator e^(ref−lp) − (ref−lp) − 1 (non-negative, unbiased: the one TRL logs as `kl`)
averaged over its tokens. The evaluation's drift is the mean over items with its interval (items are the unit). One
reply per item, not all `release.samples` of them: two forward passes over every sampled reply cost as much as
sampling them (7 % of the embedded default's training time, measured), one per item an eighth of that, and the
interval is over items either way. At β 0 TRL computes no KL, so this is how drift is known in every run (the
`drift` monitor)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from contextlib import AbstractContextManager

import torch

from rc1.monitors.state import Drift
from rc1.monitors.stats import mean_interval
from rc1.train.policy_math import assemble, kl_to_reference, token_logprobs

# (the policy) -> a context in which a forward pass of the returned model is the step-0 policy's
Reference = Callable[[torch.nn.Module], AbstractContextManager]


def adapter_off(model) -> AbstractContextManager:
    """The step-0 policy of a LoRA policy: its base, the adapter switched off (a LoRA adapter starts at zero)."""

    @contextlib.contextmanager
    def switched_off():
        with model.disable_adapter():
            yield model

    return switched_off()


def frozen_copy(reference_model: torch.nn.Module) -> Reference:
    """The step-0 policy of a fully trained one: a frozen copy of the base it started from."""

    def use(_policy) -> AbstractContextManager:
        return contextlib.nullcontext(reference_model)

    return use


class DriftProbe:
    """Folds each generated batch of sampled replies into per-item drift; `result` is the evaluation's."""

    def __init__(self, reference: Reference, temperature: float, confidence: float = 0.95):
        self._reference = reference
        self._temperature = temperature
        self._confidence = confidence
        self._per_item: dict[str, list[float]] = {}
        self._tokens = 0
        self._seconds = 0.0

    def observe(self, model, tokenizer, item_ids: list[str], prompt_ids: torch.Tensor, prompt_attention: torch.Tensor,
                completions: torch.Tensor, eos_ids: list[int]) -> None:
        """One batch: `completions[r]` was sampled for `item_ids[r]` after prompt row r."""
        started = time.perf_counter()
        rollout = assemble(tokenizer, item_ids, prompt_ids, prompt_attention, completions, eos_ids)
        mask = rollout.completion_mask
        with torch.no_grad():
            logprobs = token_logprobs(model, rollout, self._temperature)
            with self._reference(model) as reference:
                reference_logprobs = token_logprobs(reference, rollout, self._temperature)
        kl = kl_to_reference(logprobs, reference_logprobs) * mask
        per_reply = (kl.sum(1) / mask.sum(1).clamp(min=1)).tolist()
        self._tokens += int(mask.sum())
        for item_id, value in zip(item_ids, per_reply):
            self._per_item.setdefault(item_id, []).append(float(value))
        self._seconds += time.perf_counter() - started

    def result(self) -> Drift | None:
        items = [sum(values) / len(values) for values in self._per_item.values()]
        interval = mean_interval(items, self._confidence)
        if interval is None:
            return None
        return Drift(kl=interval.mean, low=interval.low, high=interval.high, items=interval.n, tokens=self._tokens,
                     seconds=self._seconds)
