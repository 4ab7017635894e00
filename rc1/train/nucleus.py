"""The top-p (nucleus) cut, exact and deterministic on every device, for every sampler that runs in torch: TRL's
trainers generating with transformers, rc1's torch engine, the evaluations and the live episodes' rollouts.

transformers' `TopPLogitsWarper` sums the sorted probabilities with a float `cumsum`, which on CUDA has no
deterministic kernel: torch's `use_deterministic_algorithms` documentation lists "torch.cumsum when called on a CUDA
tensor when dtype is floating point" among the operations it refuses (torch 2.13; rc1 trains strictly deterministic,
train.deterministic). Here each probability is first written in fixed point (an int64 count of 2^-60), so the
cumulative sum is one of integers, which is the same in any order of additions and is not on that list; the sum is
then read back in the probabilities' dtype and compared with 1 - top_p exactly as transformers compares it. Sorting
and scattering the mask back are transformers' own calls (`torch.sort` is not on the list either; neither is
`scatter`, which the documentation says acts deterministically on CUDA), so the tokens kept are transformers' on the
CPU: tests/unit/test_nucleus.py compares the two on 5,144 rows of random, tied and top-k-cut logits. 2^-60 units
round each probability by at most 2^-61; over Qwen3's 151,936 tokens the sum moves by at most 7e-14, far below a
float32 step near any threshold.

Where the cut goes in a `generate` call: transformers runs the processors it is given before its own temperature and
top-k warpers (`GenerationMixin._get_logits_processor`, the same in 5.17 and 5.24), so `CutBeforeWarpers` computes
the nucleus of the distribution those warpers will make and masks the raw scores; generate's temperature then scales
them as it always does, and its top-k keeps what is left (at most k tokens survive the cut). transformers is then
given top_p 1.0, so it adds no float cut of its own."""

from __future__ import annotations

import torch
from transformers import (
    LogitsProcessor,
    TemperatureLogitsWarper,
    TopKLogitsWarper,
)

FIXED_POINT_BITS = 60  # a probability <= 1 fits in int64 with room for the sum of every token's rounding


def nucleus_removed(scores: torch.Tensor, top_p: float, min_tokens_to_keep: int = 1) -> torch.Tensor:
    """Which tokens top-p removes from each row of `scores` (True: removed), as transformers' `TopPLogitsWarper`
    decides it: sorted ascending, the tokens whose cumulative probability is at most 1 - top_p go, the
    `min_tokens_to_keep` most likely always stay."""
    ordered, order = torch.sort(scores, descending=False)  # transformers' call, so ties fall as they fall there
    probabilities = ordered.softmax(dim=-1)
    # Sorted ascending, the tokens of probability 0 (those top-k left at -inf) come first; their cumulative sum is 0,
    # at most 1 - top_p, so they go. The fixed point is taken over the rest only: the same sums, a fraction of the work.
    width = int((probabilities > 0).sum(dim=-1).max())
    tail = probabilities[..., probabilities.size(-1) - width :]
    scale = 2.0**FIXED_POINT_BITS
    units = torch.round(tail.double() * scale).long()
    removed = torch.ones_like(probabilities, dtype=torch.bool)
    removed[..., probabilities.size(-1) - width :] = (units.cumsum(dim=-1).double() / scale).to(tail.dtype) <= (
        1 - top_p
    )
    removed[..., -min_tokens_to_keep:] = False
    return removed.scatter(-1, order, removed)


class ExactTopP(LogitsProcessor):
    """transformers' `TopPLogitsWarper`, deterministic on CUDA: for a list of warpers applied in order (temperature,
    top-k, then this), as rc1/train/rollout_sampler.py applies them."""

    def __init__(self, top_p: float, min_tokens_to_keep: int = 1):
        if not 0.0 < top_p <= 1.0:
            raise ValueError(f"top_p must be in (0, 1], got {top_p}")
        self.top_p = top_p
        self.min_tokens_to_keep = min_tokens_to_keep

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        return scores.masked_fill(nucleus_removed(scores, self.top_p, self.min_tokens_to_keep), -float("inf"))


class CutBeforeWarpers(LogitsProcessor):
    """The top-p cut for a `generate` call whose config keeps its temperature and top-k but has top_p 1.0: the nucleus
    of softmax(top_k(scores / temperature)), computed as generate's warpers will compute that distribution, masked on
    the scores before generate scales them (see the module's docstring for why this order)."""

    def __init__(self, temperature: float, top_k: int, top_p: float):
        # transformers' own warpers, as generate will build them after this processor
        self.warpers = [TemperatureLogitsWarper(temperature)] if temperature != 1.0 else []
        self.warpers += [TopKLogitsWarper(top_k=top_k)] if top_k else []
        self.cut = ExactTopP(top_p)

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        warped = scores
        for warper in self.warpers:
            warped = warper(input_ids, warped)
        removed = nucleus_removed(warped, self.cut.top_p, self.cut.min_tokens_to_keep)
        return scores.masked_fill(removed, -float("inf"))


def cut_before_warpers(temperature: float, top_k: int, top_p: float) -> list[LogitsProcessor]:
    """The processors a sampling `generate` call is given for a top-p cut (none at top_p 1.0); its config then gets
    top_p 1.0, so transformers adds no float cut of its own."""
    return [CutBeforeWarpers(temperature, top_k, top_p)] if top_p < 1.0 else []
