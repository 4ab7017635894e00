"""Drift: KL of the policy to the step-0 policy, measured on an evaluation's sampled replies as they are generated.

Each item's first `monitors.drift.replies_per_item` sampled replies are scored by the policy that drew them and by the
step-0 policy (a LoRA policy with its adapter switched off; a fully trained one against a frozen copy of its base),
both at the sampling temperature, and a reply's per-token KL is the k3 estimator e^(ref−lp) − (ref−lp) − 1
(non-negative, unbiased: the one TRL logs as `kl`) averaged over its tokens. An item's drift is the mean over its
measured replies, the evaluation's the mean over items with its interval (items are the unit). Two forward passes
over every sampled reply cost about as much as sampling them (6–8 % of the embedded default's training time,
measured); one reply per item, the default, an eighth of that. The estimate is unbiased either way but a per-token KL
is heavy-tailed, so from fewer replies it reads lower in a typical evaluation (the embedded default at step 120: 0.23
from one reply per item, 0.45 from all eight). With a `train.top_k` or `top_p` cut the replies come from the cut
distribution and are scored under the whole one (as TRL scores its rollouts): the estimate is then of a slightly
different quantity, not measured here. At β 0 TRL computes no KL, so this is how drift is known in every
run (the `drift` monitor). In live episodes the replies are each episode's first turn, the model's reply to the prompt
and its tools before any tool result (rc1/train/generation.py `_observe_first_turns`)."""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable
from contextlib import AbstractContextManager

import torch

from rc1.run.monitors.state import Drift
from rc1.run.monitors.stats import mean_interval
from rc1.train.policy_math import assemble, kl_to_reference, scored_logprobs

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

    def __init__(self, reference: Reference, temperature: float, replies_per_item: int = 1, confidence: float = 0.95):
        self.replies_per_item = replies_per_item
        self._reference = reference
        self._temperature = temperature
        self._confidence = confidence
        self._per_item: dict[str, list[float]] = {}
        self._tokens = 0
        self._seconds = 0.0

    def observe(
        self,
        model,
        tokenizer,
        item_ids: list[str],
        prompt_ids: torch.Tensor,
        prompt_attention: torch.Tensor,
        completions: torch.Tensor,
        eos_ids: list[int],
        synced: bool = False,
    ) -> None:
        """One batch: `completions[r]` was sampled for `item_ids[r]` after prompt row r. `synced`: the parameters are
        sharded, so every rank scores its batch in one forward pass per model (a collective)."""
        started = time.perf_counter()
        rollout = assemble(tokenizer, item_ids, prompt_ids, prompt_attention, completions, eos_ids)
        mask = rollout.completion_mask
        logprobs = scored_logprobs(model, rollout, self._temperature, one_pass=synced)
        with self._reference(model) as reference:
            reference_logprobs = scored_logprobs(reference, rollout, self._temperature, one_pass=synced)
        # Padding past a reply's end is masked out before it is summed (an inf there times 0 would be a NaN).
        kl = torch.where(mask.bool(), kl_to_reference(logprobs, reference_logprobs), 0.0)
        per_reply = (kl.sum(1) / mask.sum(1).clamp(min=1)).tolist()
        self._tokens += int(mask.sum())
        for item_id, value in zip(item_ids, per_reply, strict=True):
            self._per_item.setdefault(item_id, []).append(float(value))
        self._seconds += time.perf_counter() - started

    def spare(self) -> DriftProbe:
        """A probe of the same settings whose measures are thrown away (a batch run only to keep ranks in lockstep)."""
        return DriftProbe(self._reference, self._temperature, self.replies_per_item, self._confidence)

    def part(self) -> tuple[dict[str, list[float]], int, float]:
        """What this rank measured (per-item KLs, tokens, seconds), to be merged with the other ranks'."""
        return self._per_item, self._tokens, self._seconds

    def merged(
        self, parts: list[tuple[dict[str, list[float]], int, float] | None], item_ids: list[str]
    ) -> Drift | None:
        """The evaluation's drift from every rank's part (`part`), items in `item_ids`' order; seconds summed."""
        per_item: dict[str, list[float]] = {}
        for part in parts:
            for item_id, values in (part[0] if part else {}).items():
                per_item.setdefault(item_id, []).extend(values)
        self._per_item = {item_id: per_item[item_id] for item_id in item_ids if item_id in per_item}
        self._tokens = sum(part[1] for part in parts if part)
        self._seconds = sum(part[2] for part in parts if part)
        return self.result()

    def result(self) -> Drift | None:
        items = [sum(values) / len(values) for values in self._per_item.values()]
        interval = mean_interval(items, self._confidence)
        if interval is None or not math.isfinite(interval.mean + interval.low + interval.high):
            return None  # not measurable here (a policy whose logits overflow halts as non_finite)
        return Drift(
            kl=interval.mean,
            low=interval.low,
            high=interval.high,
            items=interval.n,
            tokens=self._tokens,
            seconds=self._seconds,
        )
