"""The reader's training texts: generated episodes of the built-in tasks from streams no run draws, and the copy
curriculum's random-token repeats.

Nothing here comes from a pool, shadow or gate item: items are drawn with id prefixes of their own
(`reader-<task>`, `reader-recorded-<task>`), and the generators key every item's random source by its id prefix
(rc1/data/generators/__init__.py), so these are other items under any seed; `tests/unit/test_reader.py` checks
that none shares a question with the embedded default's pool, shadow or gate set.

- Live texts: each item dressed as a live episode (question alone) and played on its gold path under
  `data.pages: mentions` (rc1/data/gold_trajectory.py `gold_names`), rendered with the tool-calling template as TRL
  renders a rollout: the question's names copied into `wiki` calls, the names of the passages read copied into the
  next, the answer copied from the last. A share carries the tools' schema block as runs show it; the rest a short
  system turn (the block is ~480 of a text's ~730 tokens and teaches nothing after its first thousand copies).
- Recorded texts: items dressed as recorded episodes (material and tool steps in the prompt) with their gold answer,
  in the built-in ChatML template.
- Repeats (`repeats`): segments of 4–23 random tokens, each written twice. Copying is the only way to predict a
  segment's second half, so a two-layer model forms the heads that copy (a previous-token head and an induction head)
  in a few hundred steps; on the episodes alone, whose names share their syllables, it had not in 6,000 (measured,
  docs/DESIGN.md §13).
"""

from __future__ import annotations

import random
from pathlib import Path

import msgspec
import torch

from rc1.data.pool import allocate
from rc1.data.task import TaskItem, episode_messages

MIX = {"hotpotqa": 0.45, "strategyqa": 0.30, "gsm8k": 0.25}  # configs/local.yaml's
DRESSING = {"max_turns": 3, "max_tool_hops": 2, "clarify_rate": 0.10, "tools": ["wiki", "calc"]}  # local.yaml's data


class Corpus(msgspec.Struct, frozen=True, kw_only=True):
    live: list[str]  # rendered live gold episodes
    recorded: list[str]  # rendered recorded episodes with their answers
    tokenizer_texts: list[str]  # what the tokenizer learns its pieces from (every text, the schema block included)


def reader_items(n: int, seed: int, prefix: str, templates: Path, episodes: str) -> list[TaskItem]:
    """`n` generated items of the built-in tasks in `MIX`, ids `<prefix>-<task>-NNNNNN`, dressed as `episodes`."""
    from rc1.data.episodes import dress
    from rc1.data.generators import generate
    from rc1.data.templates import load_pack

    items: list[TaskItem] = []
    for task, count in allocate(n, MIX).items():
        items += generate(task, count, seed, f"{prefix}-{task}")
    random.Random(f"{prefix}|order|{seed}").shuffle(items)
    return dress(items, load_pack(templates), seed=seed, stream=prefix, episodes=episodes, **DRESSING)


def build_corpus(*, live: int, recorded: int, schema_share: float, seed: int, templates: Path) -> Corpus:
    from rc1.data.environment import WikiView
    from rc1.train.gold_episodes import gold_messages, render_messages
    from rc1.train.live_generation import tool_schemas
    from rc1.train.live_tools import TOOL_CHAT_TEMPLATE
    from rc1.train.tiny_model import CHAT_TEMPLATE

    schemas = tool_schemas(wiki=WikiView(pages="mentions"))
    choose = random.Random(f"reader-schema|{seed}")
    live_texts, with_schema = [], []
    for item in reader_items(live, seed, "reader", templates, "live"):
        messages = gold_messages(item, "mentions")
        if messages is None:
            continue
        full = choose.random() < schema_share
        text = render_messages(messages, TOOL_CHAT_TEMPLATE, schemas if full else None, generation_prompt=False)
        live_texts.append(text)
        if full:
            with_schema.append(text)
    recorded_texts = [
        render_messages(
            [*episode_messages(item), {"role": "assistant", "content": f"Answer: {item.answer}"}],
            CHAT_TEMPLATE,
            None,
            generation_prompt=False,
        )
        for item in reader_items(recorded, seed, "reader-recorded", templates, "recorded")
    ]
    return Corpus(live=live_texts, recorded=recorded_texts, tokenizer_texts=live_texts + recorded_texts)


def repeats(rows: int, width: int, vocab: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """`rows` windows of `width` tokens, each a run of segments (4–23 random ids of [3, vocab), each written twice;
    ids below 3 are the special tokens), and the mask of the positions copying can predict (a segment's second
    half after its first token)."""
    windows, masks = [], []
    for _ in range(rows):
        ids: list[int] = []
        mask: list[int] = []
        while len(ids) < width:
            length = int(torch.randint(4, 24, (1,), generator=generator))
            segment = torch.randint(3, vocab, (length,), generator=generator).tolist()
            ids += segment + segment
            mask += [0] * (length + 1) + [1] * (length - 1)
        windows.append(ids[:width])
        masks.append(mask[:width])
    return torch.tensor(windows), torch.tensor(masks)
