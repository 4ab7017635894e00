"""The top-p cut rc1 makes itself (rc1/train/nucleus.py): the tokens transformers' own top-p keeps, computed without a
floating-point cumulative sum (the kernel CUDA's deterministic mode refuses), and in a `generate` call the same draws as
transformers' top-p."""

from __future__ import annotations

import pytest
import torch
from torch.overrides import TorchFunctionMode
from transformers import (
    GenerationConfig,
    LogitsProcessorList,
    Qwen3Config,
    Qwen3ForCausalLM,
    TemperatureLogitsWarper,
    TopKLogitsWarper,
    TopPLogitsWarper,
)

from rc1.train.nucleus import CutBeforeWarpers, ExactTopP, cut_before_warpers, nucleus_removed
from rc1.train.sampler_gap import RecordSampled, completion_mask, measured_rows

QWEN3_VOCAB = 151936


def transformers_removed(scores: torch.Tensor, top_p: float) -> torch.Tensor:
    return TopPLogitsWarper(top_p)(None, scores.clone()) == -float("inf")


def rows_that_differ(scores: torch.Tensor, top_p: float) -> int:
    return int((transformers_removed(scores, top_p) != nucleus_removed(scores, top_p)).any(-1).sum())


def test_the_cut_keeps_what_transformers_keeps_on_random_logits():
    generator = torch.Generator().manual_seed(0)
    differ = rows = 0
    for vocab in (64, 1000, 32000):
        for scale in (0.5, 1.0, 3.0, 8.0):
            scores = torch.randn(16, vocab, generator=generator) * scale
            for top_p in (0.5, 0.8, 0.9, 0.95, 0.99):
                differ, rows = differ + rows_that_differ(scores, top_p), rows + 16
    assert (differ, rows) == (0, 960)


def test_the_cut_keeps_what_transformers_keeps_where_logits_tie():
    """Uniform rows put the cumulative sum exactly on k/n; quantised logits tie in blocks. The sort is transformers'
    own call, so tied tokens are cut in the same order."""
    differ = rows = 0
    for n in range(1, 200):
        for top_p in (0.1, 0.25, 0.5, 0.8, 0.9, 0.95, 0.99, 0.999):
            differ, rows = differ + rows_that_differ(torch.zeros(1, n), top_p), rows + 1
    generator = torch.Generator().manual_seed(1)
    for _ in range(100):
        scores = torch.randint(-5, 5, (8, 500), generator=generator).float() * 0.5
        for top_p in (0.3, 0.7, 0.95):
            differ, rows = differ + rows_that_differ(scores, top_p), rows + 8
    assert (differ, rows) == (0, 1592 + 2400)


def test_the_cut_keeps_what_transformers_keeps_after_the_card_s_temperature_and_top_k():
    """Qwen3's vocabulary at temperature 0.6 and top_k 20: every other token already at -inf (probability 0)."""
    generator = torch.Generator().manual_seed(2)
    differ = rows = 0
    for trial in range(12):
        scores = torch.randn(8, QWEN3_VOCAB, generator=generator) * (1 + trial % 7)
        scores = TopKLogitsWarper(20)(None, TemperatureLogitsWarper(0.6)(None, scores))
        for top_p in (0.8, 0.95):
            differ, rows = differ + rows_that_differ(scores, top_p), rows + 8
    assert (differ, rows) == (0, 192)


def test_the_most_likely_token_always_stays():
    scores = torch.tensor([[5.0, 0.0, 0.0, 0.0]])
    assert nucleus_removed(scores, 0.01).tolist() == [[False, True, True, True]]
    assert nucleus_removed(scores, 1.0).tolist() == [[False, False, False, False]]
    with pytest.raises(ValueError, match="top_p must be in"):
        ExactTopP(0.0)


class CumulativeSums(TorchFunctionMode):
    """The dtypes of every cumulative sum taken inside it."""

    def __init__(self):
        super().__init__()
        self.dtypes: list[torch.dtype] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func in (torch.cumsum, torch.Tensor.cumsum):
            self.dtypes.append(args[0].dtype)
        return func(*args, **(kwargs or {}))


def test_no_floating_point_cumulative_sum_is_taken():
    """The one kernel on torch's non-deterministic list that top-p needs: transformers' warper takes it in float32,
    rc1's cut only in int64 (integer sums are equal in any order of additions, so on any kernel)."""
    scores = torch.randn(4, 1000)
    with CumulativeSums() as theirs:
        TopPLogitsWarper(0.9)(None, scores.clone())
    with CumulativeSums() as ours:
        ExactTopP(0.9)(None, scores.clone())
        CutBeforeWarpers(0.6, 20, 0.9)(None, scores.clone())
    assert theirs.dtypes == [torch.float32]
    assert ours.dtypes == [torch.int64, torch.int64]


def tiny_model() -> Qwen3ForCausalLM:
    torch.manual_seed(0)
    config = Qwen3Config(
        vocab_size=97,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=16,
    )
    return Qwen3ForCausalLM(config).eval()


def sampled(model, config: GenerationConfig, processors=()) -> torch.Tensor:
    torch.manual_seed(11)
    prompts = torch.randint(0, 97, (8, 5), generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        return model.generate(
            prompts, generation_config=config, logits_processor=LogitsProcessorList(processors) or None
        )


def card(top_p: float) -> GenerationConfig:
    return GenerationConfig(
        do_sample=True, temperature=0.6, top_k=20, top_p=top_p, max_new_tokens=40, pad_token_id=0, eos_token_id=None
    )


def test_generate_with_the_cut_before_its_warpers_draws_what_transformers_top_p_draws():
    """generate runs the processors it is given before its temperature and top-k: the cut is computed on the
    distribution those make, so 8 rows of 40 sampled tokens equal transformers' own top-p draw for draw."""
    model = tiny_model()
    transformers_cut = sampled(model, card(0.8))
    ours = sampled(model, card(1.0), cut_before_warpers(0.6, 20, 0.8))
    assert torch.equal(ours, transformers_cut)
    assert not torch.equal(ours, sampled(model, card(1.0)))  # the cut changed the draws: the check can fail
    assert cut_before_warpers(0.6, 20, 1.0) == []


def test_the_sampler_gap_records_the_log_probabilities_of_the_distribution_generate_drew_from():
    """rc1/train/sampler_gap.py's recorder, placed after the cut, keeps for its rows the log-probability of each drawn
    token under the distribution it was drawn from: transformers' own processed scores (its `output_scores`, after
    every processor and warper), renormalised, token for token. vLLM's processed_logprobs are that distribution."""
    model = tiny_model()
    recorder = RecordSampled(measured_rows(8), temperature=0.6, top_k=20)
    torch.manual_seed(11)
    prompts = torch.randint(0, 97, (8, 5), generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        out = model.generate(
            prompts,
            generation_config=card(1.0),
            logits_processor=LogitsProcessorList([*cut_before_warpers(0.6, 20, 0.8), recorder]),
            output_scores=True,
            output_logits=True,
            return_dict_in_generate=True,
        )
    drawn = out.sequences[recorder.rows, 5:]
    processed = torch.stack(out.scores, dim=1)[recorder.rows].log_softmax(dim=-1)
    theirs = processed.gather(2, drawn.unsqueeze(-1)).squeeze(-1)
    assert recorder.rows.tolist() == [0, 2, 4, 6] and theirs.shape == (4, 40)
    torch.testing.assert_close(recorder.sampled(out.sequences), theirs, rtol=0, atol=1e-6)
    uncut = (torch.stack(out.logits, dim=1)[recorder.rows] / 0.6).log_softmax(dim=-1)
    uncut = uncut.gather(2, drawn.unsqueeze(-1)).squeeze(-1)
    assert (recorder.sampled(out.sequences) - uncut).abs().max() > 1e-3  # the cut's renormalisation: it can fail


def test_a_completion_counts_up_to_its_first_end_of_sequence_token_as_trl_masks_it():
    completion = torch.tensor([[5, 6, 2, 2, 7], [5, 6, 7, 8, 9], [2, 0, 0, 0, 0]])
    assert completion_mask(completion, [2]).long().tolist() == [[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [1, 0, 0, 0, 0]]
