"""Sampling a live episode's turns row by row (rc1/train/live_generation.py): each rollout's turn draws from its own
generator, seeded by (evaluation seed, item id, sample, turn), so its draws never depend on the other rows of its
batch, which change from round to round as episodes end."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import torch
from transformers import LogitsProcessor, TemperatureLogitsWarper, TopKLogitsWarper

from rc1.train.metrics import Sampling
from rc1.train.nucleus import ExactTopP


def rollout_seed(seed: int, item_id: str, sample: int, turn: int) -> int:
    """The sampler's seed for one turn of one rollout: the evaluation's seed, the item's id, which sample, which turn
    (`generation.batch_seed`'s digest, one rollout instead of one batch)."""
    digest = hashlib.sha256("\0".join([str(seed), item_id, str(sample), str(turn)]).encode()).digest()
    return int.from_bytes(digest[:8], "big") & (2**63 - 1)


class RolloutSampler(LogitsProcessor):
    """Sampling on greedy decoding, each row from its own generator: warp the scores as `generate(do_sample=True)`
    does (temperature, then top-k, then top-p: rc1/train/nucleus.py's, deterministic on CUDA), then add Gumbel noise
    -log(E), E ~ Exp(1); the argmax of the sum is a draw from the warped distribution. Every row draws one vector per
    step whatever the other rows do."""

    def __init__(self, sampling: Sampling, seeds: Sequence[int], device) -> None:
        self._warpers: list[LogitsProcessor] = []
        if sampling.temperature != 1.0:
            self._warpers.append(TemperatureLogitsWarper(sampling.temperature))
        if sampling.top_k:
            self._warpers.append(TopKLogitsWarper(top_k=sampling.top_k))
        if sampling.top_p < 1.0:
            self._warpers.append(ExactTopP(sampling.top_p))
        self._generators = [torch.Generator(device=device).manual_seed(seed) for seed in seeds]

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        for warper in self._warpers:
            scores = warper(input_ids, scores)
        draws = [
            torch.empty(scores.size(1), device=scores.device, dtype=torch.float32).exponential_(generator=generator)
            for generator in self._generators
        ]
        tiny = torch.finfo(torch.float32).tiny  # E == 0 would make a masked token's -inf a NaN
        return scores - torch.stack(draws).clamp_min(tiny).log()
