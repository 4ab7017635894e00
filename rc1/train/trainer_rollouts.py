"""What rc1 does around a TRL trainer's rollouts where transformers samples them (`train.rollouts: hf`, every CPU run).

TRL calls `unwrapped_model.generate(..., generation_config=self.generation_config)` and passes no logits processor
(GRPO, RLOO and online DPO in TRL 1.16), and peft's `generate` hands its call to the model it wraps, so the
transformers model's `generate` is wrapped, for the calls that carry this trainer's generation config and no other
(rc1's evaluations of the same model bring their own processors):
- the top-p cut (rc1/train/nucleus.py), the trainer having been given top_p 1.0 (rc1/registry/spec.py);
- the sampler's gap (rc1/train/sampler_gap.py), where the trainer has TRL's per-token log-probability computation
  (GRPO and RLOO) and the sampler_mismatch rule is on;
- a test hook, as rc1/core/failpoints.py's kill points are: `RC1_TEST_STALE_ROLLOUTS=<k>` samples with the policy's
  weights of up to k steps before, a rollout engine whose weight syncs were skipped in between. Unset in real runs."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable

import torch
from transformers import GenerationConfig, LogitsProcessorList

from rc1.core import distributed
from rc1.train.nucleus import cut_before_warpers
from rc1.train.sampler_gap import SamplerGap

STALE_ENV = "RC1_TEST_STALE_ROLLOUTS"


class StaleRollouts:
    """The test hook's rollout weights: the policy's, taken again only every `every` steps. A call swaps them into the
    policy and the trained weights back after it, bit for bit (a copy of the model would not do: TRL patches the
    model's forward with a closure over the model itself, its fused LM head, so a deep copy still runs the original)."""

    def __init__(self, model, every: int):
        self.every = every
        self.synced_at = 0
        self.weights = _weights(model)

    @contextlib.contextmanager
    def swapped_in(self, step: int, model):
        if step - self.synced_at >= self.every:
            self.weights, self.synced_at = _weights(model), step
        trained = _weights(model)
        _load(model, self.weights)
        try:
            yield
        finally:
            _load(model, trained)


def _weights(model) -> dict[str, torch.Tensor]:
    return {name: tensor.detach().clone() for name, tensor in model.state_dict().items()}


def _load(model, weights: dict[str, torch.Tensor]) -> None:
    with torch.no_grad():
        for name, tensor in model.state_dict().items():
            tensor.copy_(weights[name])


def around_trainer_generate(trainer, temperature: float, top_k: int, top_p: float, *, gap: bool) -> SamplerGap | None:
    """Install the cut, the gap's measurement (`gap`: the rule is on) and the test hook on the trainer's rollouts;
    the gap, where it is measured, for the step reports to read."""
    if not isinstance(getattr(trainer, "generation_config", None), GenerationConfig):
        # a TRL whose trainer keeps its sampling elsewhere would sample without the cut: refuse rather than drift
        raise TypeError(f"{type(trainer).__name__} has no transformers generation_config to sample with")
    has_logps = hasattr(trainer, "_get_per_token_logps_and_entropies")
    measured = SamplerGap(_trainer_logps(trainer), temperature, top_k) if gap and has_logps else None
    cut = cut_before_warpers(temperature, top_k, top_p)
    every = os.environ.get(STALE_ENV)
    if not cut and measured is None and not every:
        return None
    model = _inner(trainer.model)
    stale = StaleRollouts(model, int(every)) if every else None
    model.generate = _around(model, trainer, cut, measured, stale)
    return measured


def left_as_loaded(trainer) -> None:
    """Take the wrapper off the model's `generate` (its own class's method again): the wrapper holds the trainer,
    which holds the model, a cycle only Python's cyclic collector would break."""
    _inner(trainer.model).__dict__.pop("generate", None)


def _inner(model):
    return model.get_base_model() if hasattr(model, "get_base_model") else model


def _trainer_logps(trainer) -> Callable:
    """The trainer's log-probabilities of the completions' tokens, as TRL computes its old_per_token_logps, in eval
    mode: a dropout the trainer trains with would otherwise add its noise to the gap and draw from the random
    source the next rollouts draw from."""

    def logps(ids, mask, completion_length):
        model = trainer.model
        training = model.training
        model.eval()
        try:
            return trainer._get_per_token_logps_and_entropies(model, ids, mask, completion_length)[0]
        finally:
            model.train(training)

    return logps


def _around(model, trainer, cut: list, gap: SamplerGap | None, stale: StaleRollouts | None) -> Callable:
    config = trainer.generation_config
    own_generate = model.generate
    eos = config.eos_token_id
    eos_ids = [eos] if isinstance(eos, int) else list(eos or [])

    def generate(*args, generation_config=None, logits_processor=None, **kwargs):
        if generation_config is not config:
            return own_generate(*args, generation_config=generation_config, logits_processor=logits_processor, **kwargs)
        prompt_ids = kwargs.get("input_ids", args[0] if args else None)
        # a sharded forward must run on every rank alike; a live batch's later turns differ by rank: not measured
        measure = gap is not None and not distributed.sharded(model)
        recorder = gap.recorder(prompt_ids.size(0)) if measure else None
        processors = LogitsProcessorList([*(logits_processor or []), *cut, *([recorder] if recorder else [])])
        with stale.swapped_in(trainer.state.global_step, model) if stale is not None else contextlib.nullcontext():
            sequences = own_generate(*args, generation_config=generation_config, logits_processor=processors, **kwargs)
        if recorder is not None:
            prompt_mask = kwargs.get("attention_mask")
            if prompt_mask is None:
                prompt_mask = prompt_ids.new_ones(prompt_ids.shape)
            gap.add(recorder, sequences, prompt_mask, eos_ids)
        return sequences

    return generate
