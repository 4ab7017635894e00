"""The sampler's gap where transformers samples a TRL trainer's rollouts: the log-probabilities `generate` gave the
tokens it drew, against the trainer's log-probabilities of the same tokens. TRL 1.16 measures this gap only where vLLM
samples (grpo_trainer.py: the mean of |old_per_token_logps − sampling_per_token_logps| over the completions' tokens,
logged as `sampling/sampling_logp_difference/mean`); rc1 measures it the same way here and records it under the same
diagnostic, so the sampler_mismatch rule reads one signal whichever engine samples.

The two sides, as TRL's two sides are:
- sampled: the distribution `generate` drew from, renormalised after temperature, top-k and rc1's top-p cut (what a
  vLLM server's `--logprobs-mode processed_logprobs` returns, the mode TRL asks for);
- trained: the trainer's own `_get_per_token_logps_and_entropies` (what TRL computes old_per_token_logps with: the
  scores over the temperature, no cut).
So a top-k or top-p cut puts -log(the kept mass) of each token into a healthy line's gap, as it does under vLLM; the
rest, where transformers samples with the trained weights, is numerical (decoding with a KV cache against one full
forward). A rollout model that is not the trained one opens the gap: rc1/train/trainer_rollouts.py's test hook samples
from a copy of the policy synced every k steps, a vLLM engine whose syncs were skipped.

`ROWS` rows of each call are measured, spread over the batch (one per group of a GRPO batch of 4 prompts): the
trainer's forward of those rows is what the measurement costs (`make bench` times it)."""

from __future__ import annotations

from collections.abc import Callable

import torch
from transformers import LogitsProcessor, TemperatureLogitsWarper, TopKLogitsWarper

from rc1.core import distributed

ROWS = 4

TrainerLogps = Callable[[torch.Tensor, torch.Tensor, int], torch.Tensor]  # (ids, mask, completion length) -> logps


def measured_rows(batch: int, rows: int = ROWS) -> torch.Tensor:
    """Which rows of a batch are measured: `rows` of them, evenly spread, none twice."""
    return torch.unique(torch.div(torch.arange(min(rows, batch)) * batch, min(rows, batch), rounding_mode="floor"))


class RecordSampled(LogitsProcessor):
    """Placed last among a `generate` call's processors (after rc1's cut, before transformers' own warpers): keeps,
    for the measured rows, the log-probability of each drawn token under the distribution it was drawn from. It changes
    no score. A call only keeps its rows' scores; every `CHUNK` steps, once their draws are in `input_ids`, they are
    reduced in one batched warp, log-softmax and gather (one per step cost 3-8 % of a tiny model's decoding), so at
    most `CHUNK` rows of the vocabulary are held; the last ones are read from the returned sequences (`sampled`)."""

    CHUNK = 32

    def __init__(self, rows: torch.Tensor, temperature: float, top_k: int):
        self.rows = rows
        self.warpers = [TemperatureLogitsWarper(temperature)] if temperature != 1.0 else []
        self.warpers += [TopKLogitsWarper(top_k=top_k)] if top_k else []
        self._pending: list[torch.Tensor] = []
        self._logps: list[torch.Tensor] = []
        self._prompt_length: int | None = None
        self._reduced = 0

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        if self._prompt_length is None:
            self._prompt_length = input_ids.size(1)
        self._pending.append(scores[self.rows])
        if len(self._pending) > self.CHUNK:  # all but this step's have their draw in input_ids
            self._reduce(input_ids, len(self._pending) - 1)
        return scores

    def _reduce(self, ids: torch.Tensor, count: int) -> None:
        start = self._prompt_length + self._reduced
        drawn = ids[self.rows, start : start + count].to(self._pending[0].device)
        warped = torch.stack(self._pending[:count], dim=1)  # rows x steps x vocabulary
        for warper in self.warpers:
            warped = warper(None, warped)
        self._logps.append(torch.log_softmax(warped, dim=-1).gather(2, drawn.unsqueeze(-1)).squeeze(-1))
        del self._pending[:count]
        self._reduced += count

    def sampled(self, sequences: torch.Tensor) -> torch.Tensor:
        """The measured rows' log-probabilities of their drawn tokens, one column per generated token."""
        if self._pending:
            self._reduce(sequences, len(self._pending))
        if not self._logps:
            return torch.zeros(len(self.rows), 0)
        return torch.cat(self._logps, dim=1)


def completion_mask(completion: torch.Tensor, eos_ids: list[int]) -> torch.Tensor:
    """Each completion's tokens up to and including its first end-of-sequence token, as TRL masks them."""
    is_eos = torch.isin(completion, torch.tensor(eos_ids, device=completion.device))
    return (is_eos.long().cumsum(dim=1) - is_eos.long()) == 0


class SamplerGap:
    """The gap of one step's rollouts: the absolute differences summed over the measured tokens, and their count."""

    def __init__(self, trainer_logps: TrainerLogps, temperature: float, top_k: int):
        self._trainer_logps = trainer_logps
        self._temperature = temperature
        self._top_k = top_k
        self._sum = 0.0
        self._count = 0

    def recorder(self, batch: int) -> RecordSampled:
        return RecordSampled(measured_rows(batch), self._temperature, self._top_k)

    def add(self, recorder: RecordSampled, sequences: torch.Tensor, prompt_mask: torch.Tensor, eos_ids: list[int]):
        """Score one `generate` call's measured rows with the trainer and add their differences."""
        rows = recorder.rows
        prompt_length = prompt_mask.size(1)
        completion = sequences[rows, prompt_length:]
        if completion.size(1) == 0:
            return
        mask = completion_mask(completion, eos_ids)
        with torch.no_grad():
            trained = self._trainer_logps(
                sequences[rows], torch.cat([prompt_mask[rows], mask.long()], dim=1), completion.size(1)
            )
        sampled = recorder.sampled(sequences).to(trained.device)
        difference = (trained.float() - sampled).abs()[mask.to(trained.device)]
        self._sum += float(difference.sum())
        self._count += int(difference.numel())

    def step_mean(self) -> float | None:
        """The mean over every rank's measured tokens since the last call (every rank calls it together), or None
        where nothing was measured; then starts the next step's."""
        shares = distributed.gather((self._sum, self._count))
        self._sum, self._count = 0.0, 0
        total, count = sum(s for s, _ in shares), sum(n for _, n in shares)
        return total / count if count else None
