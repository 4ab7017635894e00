"""Rollouts and the token-level quantities every strategy of the torch engine is built from.

A rollout is left-padded prompts followed by right-padded completions, each completion cut after its
first end token. Log-probabilities are taken with position ids from the attention mask, as generation
computed them, so a policy scores its own samples the way it drew them.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from transformers import GenerationConfig, LogitsProcessor, LogitsProcessorList, PreTrainedTokenizerBase

from rc1.data.task import TaskItem
from rc1.train.nucleus import cut_before_warpers


@dataclass
class Rollout:
    items: list[TaskItem]  # one per row (an item repeats once per completion of its prompt)
    ids: torch.Tensor  # (rows, prompt + completion)
    attention: torch.Tensor  # (rows, prompt + completion): 0 on padding
    completion_mask: torch.Tensor  # (rows, completion): 1 up to and including the first end token
    texts: list[str]
    counts: list[int]  # completion tokens per row
    # Where the rollout was sampled (not after a selection of its rows): the mean token entropy of the distributions
    # the completions were drawn from, and the share of rows cut at max_new_tokens without an end token.
    mean_entropy: float | None = None
    clipped_share: float | None = None

    @property
    def completion_width(self) -> int:
        return self.completion_mask.size(1)

    def rows(self, index: slice) -> Rollout:
        return Rollout(
            self.items[index],
            self.ids[index],
            self.attention[index],
            self.completion_mask[index],
            self.texts[index],
            self.counts[index],
        )


def encode_prompts(tokenizer: PreTrainedTokenizerBase, prompts: list[str], device) -> tuple[torch.Tensor, torch.Tensor]:
    encoded = tokenizer(text=prompts, return_tensors="pt", padding=True, padding_side="left", add_special_tokens=False)
    return encoded["input_ids"].to(device), encoded["attention_mask"].to(device)


def completion_mask(completions: torch.Tensor, eos_ids: list[int], pad_id: int) -> torch.Tensor:
    """1 for every token up to and including the first end token of each row (all of it when none ends)."""
    is_end = torch.isin(completions, torch.tensor(eos_ids, device=completions.device))
    ended_before = (torch.cumsum(is_end.int(), dim=1) - is_end.int()) > 0
    return (~ended_before).int()


def sample_rollout(
    model,
    tokenizer: PreTrainedTokenizerBase,
    items: list[TaskItem],
    prompts: list[str],
    *,
    per_prompt: int,
    max_new_tokens: int,
    temperature: float,
    eos_ids: list[int],
    device,
    top_p: float = 1.0,
    top_k: int = 0,
) -> Rollout:
    """`per_prompt` sampled completions of each prompt (rows grouped by prompt), with the model in eval mode."""
    prompt_ids, prompt_attention = encode_prompts(tokenizer, prompts, device)
    # Every logits processor off but the temperature and the configured top-p/top-k cut: a field left unset is filled
    # from the model's own generation_config (a repetition penalty, say). token_logprobs scores the samples at the
    # temperature over the whole vocabulary, as TRL's trainers do with the same cut.
    generation = GenerationConfig(
        max_new_tokens=max_new_tokens,
        do_sample=True,
        temperature=temperature,
        top_p=1.0,  # the cut is rc1's own, deterministic on CUDA (rc1/train/nucleus.py), after the entropy is read
        top_k=top_k,
        min_p=0.0,
        typical_p=1.0,
        epsilon_cutoff=0.0,
        eta_cutoff=0.0,
        repetition_penalty=1.0,
        no_repeat_ngram_size=0,
        bad_words_ids=None,
        num_return_sequences=per_prompt,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=eos_ids,
    )
    was_training = model.training
    model.eval()
    entropy = EntropyMeter(temperature)
    try:
        with torch.no_grad():
            output = model.generate(
                input_ids=prompt_ids,
                attention_mask=prompt_attention,
                generation_config=generation,
                logits_processor=LogitsProcessorList([entropy, *cut_before_warpers(temperature, top_k, top_p)]),
            )
    finally:
        model.train(was_training)
    completions = output[:, prompt_ids.size(1) :]
    rollout = assemble(
        tokenizer,
        [item for item in items for _ in range(per_prompt)],
        prompt_ids.repeat_interleave(per_prompt, 0),
        prompt_attention.repeat_interleave(per_prompt, 0),
        completions,
        eos_ids,
    )
    ended = torch.isin(completions, torch.tensor(eos_ids, device=completions.device)).any(1)
    rollout.clipped_share = float(1.0 - ended.float().mean())
    rollout.mean_entropy = entropy.mean(rollout.completion_mask)
    return rollout


class EntropyMeter(LogitsProcessor):
    """The entropy (nats) of the distribution each token is drawn from, measured as generate samples (a row's per step,
    not the step's whole logits: what TRL logs as `entropy`). Custom processors run before generate's temperature, so
    the logits are divided by it here as the sampler will."""

    def __init__(self, temperature: float):
        self._temperature = temperature
        self._steps: list[torch.Tensor] = []

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        logits = scores.float() / self._temperature
        self._steps.append(-(torch.softmax(logits, -1) * torch.log_softmax(logits, -1)).nan_to_num().sum(-1))
        return scores

    def mean(self, mask: torch.Tensor) -> float | None:
        """The mean over the completions' tokens (`mask` marks them)."""
        if not self._steps:
            return None
        per_token = torch.stack(self._steps, 1)
        return float(masked_mean(per_token, mask[:, : per_token.size(1)]))


def teacher_rollout(
    tokenizer: PreTrainedTokenizerBase,
    items: list[TaskItem],
    prompts: list[str],
    replies: list[str],
    eos_ids: list[int],
    device,
) -> Rollout:
    """Given replies (gold ones, for SFT), each closed by the tokenizer's end-of-turn token."""
    prompt_ids, prompt_attention = encode_prompts(tokenizer, prompts, device)
    end = tokenizer.convert_ids_to_tokens(eos_ids[0])
    encoded = tokenizer(
        text=[r + end for r in replies],
        return_tensors="pt",
        padding=True,
        padding_side="right",
        add_special_tokens=False,
    )
    completions = encoded["input_ids"].to(device)
    completions[encoded["attention_mask"].to(device) == 0] = tokenizer.pad_token_id
    return assemble(tokenizer, items, prompt_ids, prompt_attention, completions, eos_ids)


def assemble(tokenizer, items, prompt_ids, prompt_attention, completions, eos_ids) -> Rollout:
    mask = completion_mask(completions, eos_ids, tokenizer.pad_token_id)
    completions = completions.masked_fill(mask == 0, tokenizer.pad_token_id)
    counts = mask.sum(1).tolist()
    texts = [tokenizer.decode(row[:n], skip_special_tokens=True) for row, n in zip(completions.tolist(), counts)]
    return Rollout(
        items=items,
        ids=torch.cat([prompt_ids, completions], 1),
        attention=torch.cat([prompt_attention, mask], 1),
        completion_mask=mask,
        texts=texts,
        counts=counts,
    )


def token_logprobs(model, rollout: Rollout, temperature: float, *, hidden: bool = False):
    """Log-probability of each completion token under `model` (and, with `hidden`, the last hidden state
    at the position that predicts it: the state a value head reads)."""
    width = rollout.completion_width
    positions = (rollout.attention.cumsum(-1) - 1).clamp(min=0)
    out = model(
        input_ids=rollout.ids,
        attention_mask=rollout.attention,
        position_ids=positions,
        logits_to_keep=width + 1,
        output_hidden_states=hidden,
    )
    logits = out.logits[:, :-1, :].float() / temperature
    targets = rollout.ids[:, -width:]
    logprobs = torch.log_softmax(logits, dim=-1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    if not hidden:
        return logprobs
    return logprobs, out.hidden_states[-1][:, -width - 1 : -1, :]


# The most bytes of logits one forward pass of `scored_logprobs` holds (rows are taken as many at a time as fit, at
# least one), and the most bytes of fp32 log-softmax work one slice of positions takes.
LOGITS_BUDGET = 2**30
SLICE_BUDGET = 2**28


def scored_logprobs(model, rollout: Rollout, temperature: float, one_pass: bool = False) -> torch.Tensor:
    """`token_logprobs` without a gradient and without holding the whole rollout's logits: rows go through the model as
    many at a time as `LOGITS_BUDGET` allows (at least one), and each row group's log-softmax is taken in fp32 over
    slices of positions (`SLICE_BUDGET`). At Qwen3-4B's vocabulary (151,936) 8 replies of 2,048 tokens are 10 GB of
    fp32 logits and as much again for their log-softmax in `token_logprobs`; here one row's logits in the model's dtype
    (0.6 GB in bf16) and a 256 MiB slice. `one_pass`: every row in one forward pass, as under sharded parameters (FSDP2,
    ZeRO-3), where a forward is a collective every rank must make as many times as the others."""
    width = rollout.completion_width
    vocab = model.config.get_text_config().vocab_size  # the head's weight is a shard under ZeRO-3
    per_row = (width + 1) * vocab * torch.finfo(model.dtype).bits // 8
    rows_at_once = rollout.ids.size(0) if one_pass else max(1, LOGITS_BUDGET // per_row)
    parts = []
    with torch.no_grad():
        for start in range(0, rollout.ids.size(0), rows_at_once):
            part = rollout.rows(slice(start, start + rows_at_once))
            positions = (part.attention.cumsum(-1) - 1).clamp(min=0)
            logits = model(
                input_ids=part.ids, attention_mask=part.attention, position_ids=positions, logits_to_keep=width + 1
            ).logits[:, :-1, :]
            parts.append(_sliced_log_softmax(logits, part.ids[:, -width:], temperature))
            del logits
    return torch.cat(parts)


def _sliced_log_softmax(logits: torch.Tensor, targets: torch.Tensor, temperature: float) -> torch.Tensor:
    """log-softmax(logits / temperature) at `targets`, in fp32, a slice of positions at a time."""
    rows, width, vocab = logits.shape
    step = max(1, SLICE_BUDGET // (rows * vocab * 4))
    out = []
    for start in range(0, width, step):
        scaled = logits[:, start : start + step, :].float() / temperature
        picked = scaled.gather(-1, targets[:, start : start + step].unsqueeze(-1)).squeeze(-1)
        out.append(picked - torch.logsumexp(scaled, dim=-1))
        del scaled
    return torch.cat(out, dim=1)


def masked_mean(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    mask = mask.to(values.dtype)
    return (values * mask).sum() / mask.sum().clamp(min=1.0)


def joined_mean(parts: list[tuple[torch.Tensor, torch.Tensor]]) -> float:
    """The masked mean over (values, mask) pairs gathered from micro-batches, as one batch."""
    values = torch.cat([v.flatten() for v, _ in parts])
    mask = torch.cat([m.flatten() for _, m in parts])
    return float(masked_mean(values, mask))


def reference_drift(parts: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]) -> tuple[float, float]:
    """(KL(π‖π_ref), π_θ/π_ref), token means over (log-probs, reference log-probs, mask) parts gathered
    from micro-batches: what SFT and DPO report where a policy-gradient step reports π_θ/π_old."""
    kl = joined_mean([(kl_to_reference(lp, ref), mask) for lp, ref, mask in parts])
    ratio = joined_mean([(torch.exp(lp - ref), mask) for lp, ref, mask in parts])
    return kl, ratio


def kl_to_reference(logprobs: torch.Tensor, ref_logprobs: torch.Tensor) -> torch.Tensor:
    """Per-token KL(π‖π_ref), the k3 estimator (non-negative, unbiased): e^(ref−lp) − (ref−lp) − 1."""
    delta = ref_logprobs - logprobs
    return torch.exp(delta) - delta - 1.0


def clipped_surrogate(logprobs, old_logprobs, advantages, epsilon: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-token PPO clipped objective (to maximise) and the importance ratio π_θ/π_old."""
    ratio = torch.exp(logprobs - old_logprobs)
    objective = torch.minimum(ratio * advantages, torch.clamp(ratio, 1 - epsilon, 1 + epsilon) * advantages)
    return objective, ratio


def gae(rewards: torch.Tensor, values: torch.Tensor, mask: torch.Tensor, gamma: float, lam: float) -> torch.Tensor:
    """Generalized advantage estimates over the masked tokens of each row (values past the end are 0)."""
    rewards, values, mask = rewards * mask, values * mask, mask.to(rewards.dtype)
    advantages = torch.zeros_like(rewards)
    running = torch.zeros(rewards.size(0), dtype=rewards.dtype, device=rewards.device)
    for t in reversed(range(rewards.size(1))):
        next_value = values[:, t + 1] if t + 1 < rewards.size(1) else torch.zeros_like(running)
        delta = rewards[:, t] + gamma * next_value - values[:, t]
        running = (delta + gamma * lam * running) * mask[:, t]
        advantages[:, t] = running
    return advantages


def whiten(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    mean = masked_mean(values, mask)
    var = masked_mean((values - mean) ** 2, mask)
    return (values - mean) * torch.rsqrt(var + 1e-8) * mask
