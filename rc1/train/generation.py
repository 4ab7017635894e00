"""Replies of a policy to task items, decoded as the trainer decodes them: prompts through the chat
template fitted to max_prompt_tokens, left-padded batches, each reply cut after its first end token."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence

import torch
from transformers import GenerationConfig, LogitsProcessor, LogitsProcessorList, PreTrainedTokenizerBase

from rc1.core import distributed
from rc1.data.environment import TITLED_PAGES, WikiView
from rc1.data.task import TaskItem
from rc1.train.drift import DriftProbe
from rc1.train.metrics import EvalResult, Sampling
from rc1.train.nucleus import cut_before_warpers
from rc1.train.prompts import fit_prompt
from rc1.train.runtime import PeakMemory, capture_rng, restore_rng


def eos_token_ids(model, tokenizer: PreTrainedTokenizerBase) -> list[int]:
    """The tokens that end a reply, read from the model's generation config as TRL's trainers read them."""
    eos = model.generation_config.eos_token_id
    return [eos] if isinstance(eos, int) else list(eos or [tokenizer.eos_token_id])


def generate_replies(
    model,
    tokenizer: PreTrainedTokenizerBase,
    items: list[TaskItem],
    *,
    max_prompt_tokens: int,
    generation: GenerationConfig,
    eos_ids: list[int],
    batch_size: int,
    device,
    drift: DriftProbe | None = None,
    synced: bool = False,
    processors: Sequence[LogitsProcessor] = (),
) -> tuple[list[str], list[int], list[bool]]:
    """`generation.num_return_sequences` replies per item, item by item; returns (texts, token counts, whether each
    ended before the limit). `drift` scores each batch's replies under the policy and the step-0 policy as they come.
    `synced`: the policy's parameters are sharded (`distributed.sharded`), and every rank steps until every rank's
    replies have ended. `processors`: generate's own (the top-p cut, rc1/train/nucleus.py)."""
    texts: list[str] = []
    counts: list[int] = []
    ended: list[bool] = []
    with torch.no_grad():
        for start in range(0, len(items), batch_size):
            prompts = [fit_prompt(tokenizer, item, max_prompt_tokens)[0] for item in items[start : start + batch_size]]
            # as the trainers tokenize prompts: the chat template already wrote every special token
            encoded = tokenizer(
                text=prompts, return_tensors="pt", padding=True, padding_side="left", add_special_tokens=False
            )
            encoded = {k: v.to(device) for k, v in encoded.items()}
            output = model.generate(
                **encoded,
                generation_config=generation,
                synced_gpus=synced,
                logits_processor=LogitsProcessorList(processors) if processors else None,
            )
            width = encoded["input_ids"].size(1)
            if drift is not None:  # each item's first `replies_per_item` sampled replies (rows come item by item)
                per_item = generation.num_return_sequences or 1
                k = min(drift.replies_per_item, per_item)
                rows = torch.tensor(
                    [i * per_item + j for i in range(len(prompts)) for j in range(k)], device=output.device
                )
                drift.observe(
                    model,
                    tokenizer,
                    [item.id for item in items[start : start + batch_size] for _ in range(k)],
                    encoded["input_ids"].repeat_interleave(k, 0),
                    encoded["attention_mask"].repeat_interleave(k, 0),
                    output[rows, width:],
                    eos_ids,
                    synced=synced,
                )
            for row in output[:, width:].tolist():
                ends = [i for i, token in enumerate(row) if token in eos_ids]
                kept = row[: ends[0] + 1] if ends else row
                counts.append(len(kept))
                ended.append(bool(ends))
                texts.append(tokenizer.decode(kept, skip_special_tokens=True))
    return texts, counts, ended


def evaluate_policy(
    model,
    tokenizer: PreTrainedTokenizerBase,
    items: list[TaskItem],
    *,
    max_prompt_tokens: int,
    max_new_tokens: int,
    eos_ids: list[int],
    batch_size: int,
    device,
    sampling: Sampling | None = None,
    drift: DriftProbe | None = None,
    live_rounds: int | None = None,
    live_tools: Sequence = (),
    live_wiki: WikiView = TITLED_PAGES,
) -> EvalResult:
    """Replies of `model` to `items`: greedy, or `sampling.samples` sampled ones per item. `batch_size` counts replies
    per forward pass; the items are cut into fixed batches by position, and under a multi-process launch every rank
    generates the batches dealt to it (round-robin) and all gather the rest. Each batch's sampler is seeded by
    `sampling.seed` and the batch's own items, never by a rank or the order batches ran in, so the replies (and the
    drift) are the same on any number of processes. With sharded parameters (FSDP2, ZeRO-3) every rank runs as many
    batches as the rank with the most, in lockstep, a rank short of one generating a batch again and discarding it
    (a forward pass there is a collective of all ranks). Every RNG and the model's train/eval mode are left as found, so
    evaluating inside a run does not change its training.

    `live_rounds` (data.episodes: live, data.max_tool_rounds): each item is a live episode (`run_live_episodes`, the
    tool loop TRL trains with; `tokenizer` the tool tokenizer; `live_tools` the run's tools of yours; `live_wiki` what
    wiki shows, data.wiki), on the same
    dealt batches, each rollout sampled under its own seed; the completion is the episode's final text (thinking
    removed) and `outcomes` holds each episode's outcome, which the scorer's inputs are read from
    (rc1/scoring/pipeline.py `evaluated_inputs`: a reply forced wrong, the needless asks), and `episodes` each one's
    record (messages, tool calls, the model's tokens per turn) for the rollout archive. With `drift`, an item's
    drift is that of its episodes' first turns (`_observe_first_turns`). Not with sharded parameters yet."""
    if live_rounds is not None and distributed.sharded(model):
        raise NotImplementedError("live episodes are not yet evaluated with sharded parameters")
    started = time.perf_counter()
    peak = PeakMemory(device)
    was_training = model.training
    rng = capture_rng()
    if sampling is None:
        generation = GenerationConfig(
            max_new_tokens=max_new_tokens, do_sample=False, pad_token_id=tokenizer.pad_token_id, eos_token_id=eos_ids
        )
    else:
        generation = GenerationConfig(
            max_new_tokens=max_new_tokens,
            do_sample=True,
            temperature=sampling.temperature,
            top_k=sampling.top_k,
            top_p=1.0,  # the cut is rc1's own, deterministic on CUDA (`processors`)
            num_return_sequences=sampling.samples,
            pad_token_id=tokenizer.pad_token_id,
            eos_token_id=eos_ids,
        )
        batch_size = max(1, batch_size // sampling.samples)
    processors = () if sampling is None else cut_before_warpers(sampling.temperature, sampling.top_k, sampling.top_p)
    batches = [items[start : start + batch_size] for start in range(0, len(items), batch_size)]
    mine: dict[int, tuple] = {}  # batch -> (texts, token counts, ended[, outcomes, episode records where live])
    share = list(distributed.my_share(len(batches)))
    synced = distributed.sharded(model)
    turns = -(-len(batches) // distributed.world_size()) if synced else len(share)
    failure = None
    try:
        model.eval()
        for turn in range(turns):
            k = share[turn] if turn < len(share) else None  # None: this rank's batch to keep in lockstep, discarded
            batch = batches[0 if k is None else k]
            if sampling is not None:
                torch.manual_seed(batch_seed(sampling.seed, batch))
            if live_rounds is not None:
                if k is not None:
                    mine[k] = _live_replies(
                        model,
                        tokenizer,
                        batch,
                        max_new_tokens,
                        live_rounds,
                        device,
                        sampling,
                        live_tools,
                        live_wiki,
                        drift,
                    )
                continue
            replies = generate_replies(
                model,
                tokenizer,
                batch,
                max_prompt_tokens=max_prompt_tokens,
                generation=generation,
                eos_ids=eos_ids,
                batch_size=len(batch),
                device=device,
                drift=drift if k is not None or drift is None else drift.spare(),
                synced=synced,
                processors=processors,
            )
            if k is not None:
                mine[k] = replies
    except Exception as error:  # every rank learns of it at the gather below, and all raise it together
        failure = f"rank {distributed.rank()}: {type(error).__name__}: {error}"
        if distributed.world_size() <= 1:
            raise
    finally:
        model.train(was_training)
        restore_rng(rng)
    parts = distributed.gather((mine, drift.part() if drift is not None else None, failure))
    failures = [failed for _, _, failed in parts if failed is not None]
    if failures:
        raise EvaluationFailed("; ".join(failures))
    replies = {k: batch for part, _, _ in parts for k, batch in part.items()}
    completions = [text for k in range(len(batches)) for text in replies[k][0]]
    counts = [count for k in range(len(batches)) for count in replies[k][1]]
    ended = [done for k in range(len(batches)) for done in replies[k][2]]
    outcomes = [read for k in range(len(batches)) for read in replies[k][3]] if live_rounds is not None else None
    episodes = [record for k in range(len(batches)) for record in replies[k][4]] if live_rounds is not None else None
    samples = 1 if sampling is None else sampling.samples
    return EvalResult(
        item_ids=[item.id for item in items for _ in range(samples)],
        completions=completions,
        completion_tokens=counts,
        ended=ended,
        seconds=time.perf_counter() - started,
        samples=samples,
        generated_here=sum(len(part[0]) for part in mine.values()),
        drift=drift.merged([part for _, part, _ in parts], [item.id for item in items]) if drift is not None else None,
        mem_peak_mb=peak.read(),
        outcomes=outcomes,
        episodes=episodes,
    )


def _live_replies(
    model, tokenizer, batch, max_new_tokens, rounds, device, sampling, tools=(), wiki=TITLED_PAGES, drift=None
):
    """One batch's live episodes as evaluate_policy's (final texts, token counts, ended, outcomes, records): item by
    item, samples in order; with `drift`, their first turns observed by it."""
    from rc1.scoring.episode_record import episode_of
    from rc1.train.live_generation import run_live_episodes

    rollouts = run_live_episodes(
        model,
        tokenizer,
        batch,
        max_completion_tokens=max_new_tokens,
        max_tool_rounds=rounds,
        device=device,
        sampling=sampling,
        tools=tools,
        wiki=wiki,
    )
    if drift is not None:
        _observe_first_turns(drift, model, tokenizer, rollouts, device)
    outcomes = [r.outcome for r in rollouts]
    by_id = {item.id: item for item in batch}
    return (
        [read.final_text for read in outcomes],
        [r.completion_tokens for r in rollouts],
        [r.ended for r in rollouts],
        outcomes,
        [episode_of(by_id[r.item_id], r.messages, r.transcript, r.turn_tokens) for r in rollouts],
    )


def _observe_first_turns(drift: DriftProbe, model, tokenizer, rollouts, device) -> None:
    """A live evaluation's drift: the first turn of each item's first `replies_per_item` episodes (the model's reply
    to the prompt and its tools, before any tool result: the one turn every episode has, sampled from the policy
    alone), scored as a one-turn reply is. Later turns follow tool results, which the step-0 policy would not have
    been shown. Turns of one length share a forward pass: a turn cut by the budget has no end token for the mask to
    stop at, so none is padded."""
    from rc1.train.live_generation import left_padded, turn_end_ids

    eos_ids = turn_end_ids(model, tokenizer)
    by_length: dict[int, list] = {}
    for rollout in rollouts:
        if rollout.sample < drift.replies_per_item and rollout.first_turn:
            by_length.setdefault(len(rollout.first_turn), []).append(rollout)
    for _, group in sorted(by_length.items()):
        prompts, attention = left_padded([r.prompt_ids for r in group], tokenizer.pad_token_id, device)
        turns = torch.tensor([r.first_turn for r in group], device=device)
        drift.observe(model, tokenizer, [r.item_id for r in group], prompts, attention, turns, eos_ids)


class EvaluationFailed(RuntimeError):
    """A rank failed while generating its share of an evaluation; every rank raises it (none waits on the others)."""


def batch_seed(seed: int, batch: list[TaskItem]) -> int:
    """The sampler's seed for one batch of items: the evaluation's seed and the items' ids, nothing else."""
    digest = hashlib.sha256("\0".join([str(seed), *(item.id for item in batch)]).encode()).digest()
    return int.from_bytes(digest[:8], "big") & (2**63 - 1)
