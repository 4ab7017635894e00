"""What a model copies from its context, measured on prompts it was never trained on.

- `repeat_probe`: segments of random tokens of the model's own vocabulary. A prompt shows `SHOWN` segments each
  written twice (what a copy looks like), then a new one once and begun again (its first token); the model continues
  greedily, and the segment counts when the whole rest of it comes back exactly: the exact-span copy rate. The
  segments are drawn from a generator seeded apart from the reader's build (`PROBE_SEED`), so none is one it trained
  on, and no task is in them. (Without the shown pairs the reader copies 3 of 200: nothing in a lone segment says it
  is to be repeated; with 1, 3 and 6 pairs 61, 85 and 95 of 100, measured on the first build.)
- `live_probe`: greedy live episodes (rc1's tool loop, `run_live_episodes`) on held-out items, read off their
  transcripts: wiki calls that opened a page, wiki calls whose title is a run of whole words of the question or of a
  result read before it (copied, not made up), calc calls whose numbers were all given (`episode_outcome.grounded`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import msgspec
import torch

from rc1.data.environment import ToolCall, WikiView
from rc1.data.task import TaskItem
from rc1.scoring.episode_outcome import grounded

PROBE_SEED = 31_337
SHOWN = 3


class Count(msgspec.Struct, frozen=True):
    hits: int
    of: int


class LiveReading(msgspec.Struct, frozen=True, kw_only=True):
    episodes: int
    wiki_opened: Count
    wiki_copied: Count
    calc_grounded: Count


def repeat_probe(model, vocab: int, segments: int = 200, seed: int = PROBE_SEED) -> Count:
    """Of `segments` random-token segments (8–16 ids of [3, vocab)), how many the model repeats exactly after `SHOWN`
    repeated ones (4–23 ids each)."""
    generator = torch.Generator().manual_seed(seed)
    hits = 0
    was_training = model.training
    model.eval()
    try:
        for _ in range(segments):
            shown = []
            for _ in range(SHOWN):
                pair = torch.randint(
                    3, vocab, (int(torch.randint(4, 24, (1,), generator=generator)),), generator=generator
                )
                shown += [pair, pair]
            length = int(torch.randint(8, 17, (1,), generator=generator))
            segment = torch.randint(3, vocab, (length,), generator=generator)
            ids = torch.cat([*shown, segment, segment[:1]]).unsqueeze(0)
            with torch.no_grad():
                for _ in range(length - 1):
                    ids = torch.cat([ids, model(input_ids=ids).logits[:, -1:].argmax(-1)], dim=1)
            hits += bool(torch.equal(ids[0, -length:], segment))
    finally:
        model.train(was_training)
    return Count(hits, segments)


def live_probe(
    model, tool_tokenizer, items: Sequence[TaskItem], wiki: WikiView, *, max_completion_tokens: int, rounds: int
) -> LiveReading:
    from rc1.train.live_generation import run_live_episodes

    rollouts = run_live_episodes(
        model,
        tool_tokenizer,
        items,
        max_completion_tokens=max_completion_tokens,
        max_tool_rounds=rounds,
        device="cpu",
        wiki=wiki,
    )
    by_id = {item.id: item for item in items}
    return read_calls([(by_id[r.item_id], list(r.transcript)) for r in rollouts])


def read_calls(episodes: Sequence[tuple[TaskItem, list[ToolCall]]]) -> LiveReading:
    """`episodes`: each item with its episode's transcript."""
    opened = copied = wiki = calc = given = 0
    for item, calls in episodes:
        for i, call in enumerate(calls):
            if call.tool == "wiki":
                wiki += 1
                opened += call.ok
                copied += copied_title(item, calls[:i], call)
            elif call.tool == "calc":
                calc += 1
                given += grounded(item, calls[:i], call)
    return LiveReading(
        episodes=len(episodes),
        wiki_opened=Count(opened, wiki),
        wiki_copied=Count(copied, wiki),
        calc_grounded=Count(given, calc),
    )


def copied_title(item: TaskItem, before: Sequence[ToolCall], call: ToolCall) -> bool:
    """The call's title is a run of whole words (case aside) of the question or of a result read before it: "Lake
    Anne" of "… Lake Anne's …", not "Lake A"."""
    title = call.arguments.get("title") if isinstance(call.arguments, dict) else None
    words = _words(title) if isinstance(title, str) else []
    if not words:
        return False
    for text in [item.question, *(c.result for c in before if c.ok)]:
        seen = _words(text)
        if any(seen[i : i + len(words)] == words for i in range(len(seen) - len(words) + 1)):
            return True
    return False


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())
