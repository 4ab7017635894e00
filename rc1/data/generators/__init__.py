"""Built-in task generators: GSM8K-, HotpotQA- and StrategyQA-style items whose answers are known by construction.

Determinism: item i is drawn from its own `random.Random` keyed by (id_prefix, task, seed, i) — a str
seed, which `random` hashes with SHA-512, so the same on every machine and in every process. An item
depends on nothing but its key: the first k items of a 600-item pool are those of a 30,000-item
pool, and two prefixes ("gsm8k", "shadow-gsm8k") are disjoint streams even under the same seed.

Diversity is designed in. Corpus-level distinct-2 counts a bigram once however many items use it, so
a template's fixed words are worth nothing after the first item; what counts is how many bigrams
touch a high-entropy slot. Templates therefore keep runs of fixed words short, put a made-up name
(syllable-built: 100,000s each of given names, surnames, towns and rivers) or a number beside almost
every fixed word, and use names where English would use a pronoun. Short items are filled out with
name-dense asides, which is also what lifts a 30,000-item pool above distinct-2 0.60.

The package, one job per module: `names` (syllable-built names and word tables), `item` (an item's
random source and template filling), `prompt` (framing, length floor, asides), and one module per task
family — `gsm8k`, `hotpotqa`, `strategyqa`. This module is the public API and the task registry.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Callable, Sequence

from rc1.core.catalog import TASKS
from rc1.data.generators.gsm8k import MONEY_START, MONEY_STEPS, STOCK_START, STOCK_STEPS, _gsm8k  # noqa: F401 (tests read them here)
from rc1.data.generators.hotpotqa import _hotpotqa
from rc1.data.generators.item import _Item
from rc1.data.generators.prompt import INSTRUCTION, MIN_PROMPT_WORDS, render_prompt
from rc1.data.generators.strategyqa import _strategyqa
from rc1.data.task import DIFFICULTIES, Difficulty, TaskItem

__all__ = ["INSTRUCTION", "MIN_PROMPT_WORDS", "TASKS", "generate", "render_prompt"]


def generate(
    task: str, n: int, seed: int, id_prefix: str, *, difficulties: Sequence[Difficulty] | None = None
) -> list[TaskItem]:
    """n items of `task` with ids f"{id_prefix}-{i:06d}".

    `difficulties` fixes item i's difficulty (the shadow set stratifies with it); by default each
    item draws its own, uniformly.
    """
    if task not in _BUILDERS:
        raise ValueError(f"unknown task {task!r}; built-in tasks are {', '.join(TASKS)}")
    if difficulties is not None and len(difficulties) != n:
        raise ValueError(f"difficulties has {len(difficulties)} entries for {n} items")
    build, key = _BUILDERS[task], f"{id_prefix}|{task}|{seed}"
    items = []
    for i in range(n):
        rng = random.Random(f"{key}|{i}")
        difficulty = difficulties[i] if difficulties is not None else rng.choice(DIFFICULTIES)
        # Yes/no labels are balanced exactly within each pair of consecutive items, in a per-pair order.
        yes = i % 2 != zlib.crc32(f"{key}|pair{i // 2}".encode()) & 1
        question, context, answer = build(_Item(rng), difficulty, yes)
        items.append(
            TaskItem(
                id=f"{id_prefix}-{i:06d}",
                task=task,
                question=question,
                context=context,
                answer=answer,
                difficulty=difficulty,
                prompt=render_prompt(question, context),
            )
        )
    return items


_BUILDERS: dict[str, Callable[[_Item, Difficulty, bool], tuple[str, str, str]]] = {
    "gsm8k": _gsm8k,
    "hotpotqa": _hotpotqa,
    "strategyqa": _strategyqa,
}
