"""Live episodes for evaluation (issue 43): the multi-turn tool loop TRL runs in training, on transformers'
`generate`, deterministic, so a checkpoint's shadow-set evaluation, round 2's shadow run and the release verdict's
gate set measure the episodes the policy is trained on. `evaluate_policy(live_rounds=…)` calls it.

TRL 1.16.0's loop as installed (`G:` = `site-packages/trl/trainer/grpo_trainer.py`), kept here step for step:
- The prompt is the row's messages (`live_row`) through the tool tokenizer (`with_tool_calling`) with the tools'
  schemas, those of `LiveEnvironment`'s public methods in name order, and the generation prompt (G:686-703,
  1705-1720). Turns are never re-rendered: each round's input is prompt ids + completion ids + tool-suffix ids
  (G:2028-2042), the suffix rendered as `_get_tool_suffix_ids` renders it (G:1893-1943).
- A turn ends at its first end token, the tokenizer's eos then the model's (G:408-416, 1880-1888), and is parsed by
  TRL's own `parse_response` with the ids before it as prefix (G:2228-2242, 2170-2177): a malformed call makes the
  whole turn plain text, which ends the episode.
- A round runs every call of every rollout whose last turn called tools, in order (G:1964-2026), appends one `tool`
  message per call (`str(result)`), then generates the next turn of all of them in one left-padded batch
  (G:2124-2130). `max_tool_rounds` counts rounds (None: no cap); a call in the turn after the last round is left
  unexecuted (G:1957).
- `max_completion_tokens` counts everything after the prompt, tool-result tokens included. A rollout whose tool
  suffix would pass it, or reach the context size, stops at its call: its tool messages are rolled back, the calls
  stay in its transcript (they ran; G:2044-2065). A later turn is cut to what is left (G:2131-2144); a turn cut to
  nothing adds no message (G:2182-2184). `model_tokens` counts only the model's own tokens (G:2276-2277).

Where it differs, on purpose:
- A call is run through `call_tool` on the item's `EpisodeEnvironment`, so an unknown tool or arguments a tool does
  not take is a recorded failure the model reads as `error: …`. TRL looks the name up and calls `method(**arguments)`
  itself (G:1979-1995): there the model reads `{'error': 'Tool search not found.'}` or the TypeError's text, and the
  transcript holds nothing. A valid call reads the same text both ways.
- Sampling draws from one generator per rollout and turn, seeded by (evaluation seed, item id, sample, turn), through
  the Gumbel-max trick on greedy decoding (`RolloutSampler`, rc1/train/rollout_sampler.py): the same distribution as
  `do_sample=True` (temperature, top-k, top-p in transformers' order), but a rollout's draws never depend on the
  other rows of its batch; TRL draws from the global torch RNG. `generation.py` seeds each batch by its items' ids;
  per rollout is the same idea one level down, needed because the rows of a round change as episodes end.
- Each round asks `generate` for the most tokens any of its rollouts has left, not the whole budget (G:1156): the
  tokens kept are the same.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec
import torch
from transformers import (
    GenerationConfig,
    LogitsProcessorList,
    PreTrainedTokenizerBase,
)
from transformers.utils import get_json_schema
from trl.chat_template_utils import parse_response

from rc1.core.errors import BadInput
from rc1.data.environment import TITLED_PAGES, EpisodeEnvironment, ToolCall, WikiView, call_tool
from rc1.data.task import TaskItem
from rc1.data.user_tools import ToolOfYours
from rc1.scoring.episode_outcome import EpisodeOutcome, outcome
from rc1.train.live_tools import live_environment_class, live_row
from rc1.train.metrics import Sampling
from rc1.train.rollout_sampler import RolloutSampler, rollout_seed

Message = dict[str, Any]


class LiveRollout(msgspec.Struct, frozen=True, kw_only=True):
    """One episode of one item (its `sample`-th under sampling): what the model said, what the tools answered, and how
    it ended. `messages` is the completion as TRL's reward functions receive it (assistant turns as TRL parses them,
    tool replies between them); `text` is the last assistant message's content, thinking excluded: what a scorer
    reads. `unfinished`: the last message is not an answer (it still calls a tool, left pending by `max_tool_rounds`
    or the budget, or it is a tool reply the budget left no room to answer). `budget_cut`: the budget or the context
    size stopped the episode (a tool result rolled back, or a turn cut before its end token)."""

    item_id: str
    sample: int = 0
    text: str
    messages: list[Message]
    transcript: list[ToolCall]
    turns: int  # the model's turns (assistant messages)
    tool_calls: int  # calls run, those the budget rolled back included
    failed_calls: int
    unfinished: bool
    budget_cut: bool
    ended: bool  # the completion's last token is an end token (TRL's "not truncated", G:2301-2302)
    model_tokens: int  # the model's own tokens (TRL's completion length, G:2276-2277)
    completion_tokens: int  # everything after the prompt, tool-result tokens included: what the budget counts
    outcome: EpisodeOutcome  # the episode as the scorer reads it (`episode_outcome.outcome`)
    turn_tokens: list[int] = msgspec.field(default_factory=list)  # the model's tokens per assistant message, in order
    prompt_ids: list[int] = msgspec.field(default_factory=list)  # the rendered prompt (tools block included)
    first_turn: list[int] = msgspec.field(default_factory=list)  # the model's first turn, before any tool result


def tool_schemas(tools: Sequence[ToolOfYours] = (), wiki: WikiView = TITLED_PAGES) -> list[dict[str, Any]]:
    """The tools' JSON schemas exactly as TRL renders them for the environment class of a run with `tools` of yours
    and `wiki` (`live_environment_class`; neither: `LiveEnvironment`) (G:691-702): every public function of the class
    but `reset` and `get_reward`, in name order, from the type hints and docstrings."""
    cls = live_environment_class(tools, wiki)
    probe = cls({})
    return [
        get_json_schema(getattr(probe, name))
        for name, _ in inspect.getmembers(cls, inspect.isfunction)
        if name not in ("reset", "get_reward") and not name.startswith("_")
    ]


def left_padded(sequences: Sequence[list[int]], pad: int, device) -> tuple[torch.Tensor, torch.Tensor]:
    """`sequences` as one batch padded on the left with `pad` (a generation prompt's side), and its attention mask."""
    width = max(len(s) for s in sequences)
    ids = torch.tensor([[pad] * (width - len(s)) + list(s) for s in sequences], device=device)
    mask = torch.tensor([[0] * (width - len(s)) + [1] * len(s) for s in sequences], device=device)
    return ids, mask


def turn_end_ids(model, tokenizer: PreTrainedTokenizerBase) -> list[int]:
    """The tokens that end a turn, as TRL reads them (G:408-416): the tokenizer's eos (`<|im_end|>` for the tool
    tokenizer), then every eos of the model's generation config."""
    eos = model.generation_config.eos_token_id
    ids = [] if eos is None else [eos] if isinstance(eos, int) else list(eos)
    return ids if tokenizer.eos_token_id in ids else [tokenizer.eos_token_id, *ids]


class _Episode:
    """One rollout while the loop runs: TRL's per-rollout state (prompt ids, completion ids, messages) and its tools."""

    def __init__(
        self, item: TaskItem, sample: int, prompt_ids: list[int], tools: Sequence[ToolOfYours], wiki: WikiView
    ) -> None:
        self.item, self.sample, self.prompt_ids = item, sample, prompt_ids
        self.env = EpisodeEnvironment(item, tools, wiki=wiki)
        self.completion_ids: list[int] = []
        self.messages: list[Message] = []
        self.turns = self.model_tokens = 0
        self.turn_tokens: list[int] = []  # per assistant message
        self.budget_cut = False

    def calls(self) -> list[dict[str, Any]]:
        return (self.messages[-1].get("tool_calls") or []) if self.messages else []


class _Loop:
    """The loop's fixed parts: model, tokenizer, budget, sampling, and the one generate call a turn goes through."""

    def __init__(
        self, model, tokenizer, *, budget, device, sampling, chat_template_kwargs, yours=(), wiki=TITLED_PAGES
    ) -> None:
        self.model, self.tokenizer, self.budget, self.device, self.sampling = model, tokenizer, budget, device, sampling
        self.kwargs = dict(chat_template_kwargs or {})
        self.yours = tuple(yours)  # the run's tools of yours (data.tools_of_yours)
        self.wiki = wiki  # what wiki shows (data.pages, data.wiki): its schema, and each episode's pages
        self.tools = tool_schemas(self.yours, wiki)
        self.eos_ids = turn_end_ids(model, tokenizer)
        self.context = model.config.max_position_embeddings  # TRL's ceiling on the transformers path (G:2052-2053)

    def prompt_ids(self, item: TaskItem) -> list[int]:
        return self.tokenizer.apply_chat_template(
            conversation=[live_row(item)["prompt"]],
            tools=self.tools,
            add_generation_prompt=True,
            tokenize=True,
            return_dict=True,
            **self.kwargs,
        )["input_ids"][0]

    def until_end(self, ids: list[int]) -> list[int]:
        ends = [i for i, token in enumerate(ids) if token in self.eos_ids]
        return ids[: ends[0] + 1] if ends else ids

    def generate(self, episodes: list[_Episode], sequences: list[list[int]], limits: list[int]) -> list[list[int]]:
        """The next turn of each episode after its `sequence`, cut after its first end token, at most `limit` long."""
        out: list[list[int]] = [[] for _ in episodes]
        rows = [i for i, limit in enumerate(limits) if limit > 0]
        if not rows:
            return out
        pad = self.tokenizer.pad_token_id
        input_ids, mask = left_padded([sequences[i] for i in rows], pad, self.device)
        width = input_ids.size(1)
        config = GenerationConfig(
            max_new_tokens=max(limits[i] for i in rows),
            do_sample=False,
            repetition_penalty=1.0,  # as TRL sets it (G:1165): a penalty in the model's own config applies to neither
            pad_token_id=pad,
            eos_token_id=self.eos_ids,
        )
        processors = None
        if self.sampling is not None:
            seeds = [
                rollout_seed(self.sampling.seed, episodes[i].item.id, episodes[i].sample, episodes[i].turns)
                for i in rows
            ]
            processors = LogitsProcessorList([RolloutSampler(self.sampling, seeds, self.device)])
        output = self.model.generate(
            input_ids=input_ids,
            attention_mask=mask,
            generation_config=config,
            logits_processor=processors,
        )
        for i, row in zip(rows, output[:, width:].tolist(), strict=True):
            out[i] = self.until_end(row)[: limits[i]]
        return out

    def take_turn(self, episode: _Episode, before: list[int], ids: list[int], limit: int) -> None:
        """Add a turn the model wrote after `before` (the ids it saw), at most `limit` long: TRL's parse and
        bookkeeping; a turn that reached its limit before an end token was cut by the budget."""
        episode.completion_ids = before[len(episode.prompt_ids) :] + ids
        ended = bool(ids) and ids[-1] in self.eos_ids
        episode.budget_cut = episode.budget_cut or (len(ids) == limit and not ended)
        if ids:  # a turn cut to nothing adds no message (G:2170-2184)
            episode.messages.append(parse_response(self.tokenizer, ids, prefix=before, tools=self.tools))
            episode.turns += 1
            episode.model_tokens += len(ids)
            episode.turn_tokens.append(len(ids))

    def run_calls(self, episode: _Episode) -> list[int] | None:
        """Run the last turn's calls; the ids the next turn follows, or None when their results would pass the budget
        or the context (the tool messages rolled back, the calls kept in the transcript)."""
        replies = []
        for call in episode.calls():
            function = call["function"]  # as `qwen3_template` parses every call: {"type": "function", "function": …}
            result = call_tool(episode.env, function["name"], function["arguments"])
            replies.append({"role": "tool", "name": function["name"], "content": str(result)})
        sequence = episode.prompt_ids + episode.completion_ids + self.suffix_ids(replies)
        if len(sequence) - len(episode.prompt_ids) > self.budget or len(sequence) >= self.context:
            episode.budget_cut = True
            return None
        episode.messages.extend(replies)
        return sequence

    def suffix_ids(self, replies: list[Message]) -> list[int]:
        """The ids of the tool replies as the template wraps them, up to the next generation prompt (G:1893-1943)."""
        dummy = [
            {"role": "user", "content": "dummy"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"type": "function", "function": {"name": replies[0]["name"], "arguments": {}}}],
            },
        ]
        render = self.tokenizer.apply_chat_template
        prefix = render(dummy, add_generation_prompt=False, tokenize=True, return_dict=False, **self.kwargs)
        full = render(dummy + replies, add_generation_prompt=True, tokenize=True, return_dict=False, **self.kwargs)
        ends = [i for i, token in enumerate(prefix) if token == self.tokenizer.eos_token_id]
        if ends:
            prefix = prefix[: ends[-1] + 1]
        if full[: len(prefix)] != prefix:
            raise ValueError("the tool template is not prefix-preserving: a call is not a prefix of it and its replies")
        return full[len(prefix) :]


def run_live_episodes(
    model,
    tokenizer: PreTrainedTokenizerBase,
    items: Sequence[TaskItem],
    *,
    max_completion_tokens: int,
    max_tool_rounds: int | None,
    device,
    sampling: Sampling | None = None,
    forced_turns: Mapping[str, Sequence[str]] | None = None,
    chat_template_kwargs: Mapping[str, Any] | None = None,
    tools: Sequence[ToolOfYours] = (),
    wiki: WikiView = TITLED_PAGES,
) -> list[LiveRollout]:
    """The live episodes of `items`, greedy or `sampling.samples` sampled ones per item, item by item; every turn of
    every rollout still running goes through one batched `generate` per round, and each rollout's result is the same
    whichever other items share the call (up to the padding's numerics: tests/e2e/test_live_generation.py).

    `tokenizer` is the tool tokenizer (`live_tools.with_tool_calling`). `forced_turns[item_id]`: the text of that
    item's first turns, taken as if the model had written them (each cut after its first end token and to the
    budget, then parsed and run like any turn); for tests and warm-start data, never an evaluation's. The global RNGs
    are not drawn from; the model's train/eval mode is left as found. `tools`: the run's tools of yours, offered and
    run beside the built-in ones (one that raises or hangs is ToolOfYoursFailed, naming it); `wiki` what wiki shows
    (data.pages, data.wiki).

    Raises BadInput (about `model.name`) when the tokenizer cannot parse a turn (no `response_template`) or cannot pad
    a round's batch (no pad token)."""
    if tokenizer.response_template is None:
        raise BadInput(
            "model.name: the tokenizer has no response_template, so tool calls cannot be read back; "
            "pass live_tools.with_tool_calling(tokenizer)"
        )
    if tokenizer.pad_token_id is None:
        raise BadInput("model.name: the tokenizer has no pad token, so a round's episodes cannot be batched")
    if max_completion_tokens < 1:
        raise ValueError(f"max_completion_tokens must be at least 1, got {max_completion_tokens}")
    loop = _Loop(
        model,
        tokenizer,
        budget=max_completion_tokens,
        device=device,
        sampling=sampling,
        chat_template_kwargs=chat_template_kwargs,
        yours=tools,
        wiki=wiki,
    )
    forced = {key: list(turns) for key, turns in (forced_turns or {}).items()}
    samples = 1 if sampling is None else sampling.samples
    episodes = [_Episode(item, k, loop.prompt_ids(item), loop.yours, wiki) for item in items for k in range(samples)]
    was_training = model.training
    try:
        model.eval()
        with torch.no_grad():
            _turn(loop, forced, episodes, [e.prompt_ids for e in episodes])
            running, rounds = [e for e in episodes if e.calls()], 0
            while running and (max_tool_rounds is None or rounds < max_tool_rounds):
                after = [(episode, loop.run_calls(episode)) for episode in running]
                going = [(episode, sequence) for episode, sequence in after if sequence is not None]
                _turn(loop, forced, [e for e, _ in going], [s for _, s in going])
                running, rounds = [e for e, _ in going if e.calls()], rounds + 1
    finally:
        model.train(was_training)
    return [_result(loop, episode) for episode in episodes]


def _turn(loop: _Loop, forced: dict[str, list[str]], episodes: list[_Episode], sequences: list[list[int]]) -> None:
    """One turn of each episode after its sequence: forced text where `forced` has this turn, the model's otherwise."""
    limits = [loop.budget - (len(s) - len(e.prompt_ids)) for e, s in zip(episodes, sequences, strict=True)]
    scripted = {}
    for i, episode in enumerate(episodes):
        turns = forced.get(episode.item.id, [])
        if episode.turns < len(turns):
            ids = loop.until_end(loop.tokenizer.encode(turns[episode.turns], add_special_tokens=False))
            if not ids:
                raise ValueError(f"forced turn {episode.turns} of {episode.item.id!r} has no tokens")
            scripted[i] = ids[: limits[i]]
    written = loop.generate(episodes, sequences, [0 if i in scripted else limit for i, limit in enumerate(limits)])
    for i, episode in enumerate(episodes):
        loop.take_turn(episode, sequences[i], scripted.get(i, written[i]), limits[i])


def _result(loop: _Loop, episode: _Episode) -> LiveRollout:
    """The rollout as the scorer reads it: its text, calls and ending come from `episode_outcome.outcome`, the one
    reading of an episode's messages and transcript (training's reward reads TRL's rollouts through it too)."""
    transcript = list(episode.env.transcript)
    read = outcome(episode.item, episode.messages, transcript)
    ids = episode.completion_ids
    return LiveRollout(
        item_id=episode.item.id,
        sample=episode.sample,
        text=read.final_text,
        messages=episode.messages,
        transcript=transcript,
        turns=episode.turns,
        tool_calls=read.tool_calls,
        failed_calls=read.failed_calls,
        unfinished=read.unfinished,
        budget_cut=episode.budget_cut,
        ended=bool(ids) and ids[-1] in [*loop.eos_ids, loop.tokenizer.pad_token_id],
        model_tokens=episode.model_tokens,
        completion_tokens=len(ids),
        outcome=read,
        turn_tokens=list(episode.turn_tokens),
        prompt_ids=list(episode.prompt_ids),
        first_turn=ids[: episode.turn_tokens[0]] if episode.turn_tokens else [],
    )
