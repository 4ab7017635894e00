"""`python -m rc1.bench --warm-copy-only [--steps N] [--fresh N] [--wide]` (issue 43): can the warm-started built-in
model name a page?

Live tool use pays only where the policy reads what its tools return, and `wiki(title)` returns a page only for a
title of the item's pages, which the question names: the model must copy a name from its context into a call. This
measures whether the live warm start teaches that, before any RL: the embedded default's data (round 1 of
configs/local.yaml with live episodes, in a fresh workspace), the built-in model warm-started on the pool's gold
episodes (`--steps`, default the live arms' 400), then the shadow set's greedy live episodes. Read off their
transcripts: wiki calls that opened a page, calls whose argument is words of the question (copied), calc calls that
parsed, each with its 95 % Wilson interval.

`--fresh N` adds N items from the generators' stream of another seed, dressed as the pool's, to the warm start (many
distinct names, each seen about once: copying cannot be memorized); `--wide` builds the model 2× wider and 2× deeper
(4 layers × 128). Measured on 2 CPU cores (issue 43's notes; docs/DESIGN.md §12): 400 steps, 1,000 steps, 4,000 fresh
items, and 4,000 fresh items on the wide model (600 steps) each opened 0 pages on the shadow set.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import msgspec

from rc1.data.environment import ToolCall
from rc1.data.task import TaskItem

REPO = Path(__file__).resolve().parents[2]
WIDE = {
    "hidden_size": 128,
    "num_hidden_layers": 4,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 32,
    "intermediate_size": 384,
}
FRESH_SEED = 777_001  # the fresh items' stream: the pool's is run.seed's


class CopyReading(msgspec.Struct, frozen=True, kw_only=True):
    """What a set of live episodes did with wiki and calc."""

    episodes: int
    wiki_calls: int
    pages_opened: int  # wiki calls that returned a page
    copied: int  # wiki calls whose title is words of the item's question
    calc_calls: int
    calc_parsed: int


def read_copying(episodes: list[tuple[TaskItem, list[ToolCall]]]) -> CopyReading:
    """`episodes`: each item with its episode's transcript."""
    wiki = [(item, call) for item, calls in episodes for call in calls if call.tool == "wiki"]
    calc = [call for _, calls in episodes for call in calls if call.tool == "calc"]
    return CopyReading(
        episodes=len(episodes),
        wiki_calls=len(wiki),
        pages_opened=sum(call.ok for _, call in wiki),
        copied=sum(_copied(item.question, call) for item, call in wiki),
        calc_calls=len(calc),
        calc_parsed=sum(call.ok for call in calc),
    )


def _copied(question: str, call: ToolCall) -> bool:
    """The call's title is a run of whole words of the question (case aside): "Lake Anne" of "… Lake Anne's …", not
    "Lake A"."""
    title = call.arguments.get("title") if isinstance(call.arguments, dict) else None
    words = _words(title) if isinstance(title, str) else []
    asked = _words(question)
    return bool(words) and any(asked[i : i + len(words)] == words for i in range(len(asked) - len(words) + 1))


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def report(reading: CopyReading, label: str) -> None:
    from rc1.bench.live_arms import wilson

    def share(k: int, n: int) -> str:
        return wilson(k / n if n else 0.0, n)

    print(f"warm start {label}: {reading.episodes} greedy live episodes of the shadow set", flush=True)
    print(f"  wiki calls that opened a page      {share(reading.pages_opened, reading.wiki_calls)}")
    print(f"  wiki titles copied from the question {share(reading.copied, reading.wiki_calls)}")
    print(f"  calc calls that parsed             {share(reading.calc_parsed, reading.calc_calls)}")


def measure(work: Path, *, steps: int, fresh: int, wide: bool) -> tuple[CopyReading, float]:
    """Round 1 of the embedded default with live episodes in `work`, the warm start, the shadow set's episodes;
    the reading and the warm start's seconds."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from rc1.app.datasets import dress_items
    from rc1.app.policy import _live_gold
    from rc1.config.loading import load_config
    from rc1.core.workspace import Workspace
    from rc1.data.pool import build_pool
    from rc1.data.task import read_items
    from rc1.train.live_generation import run_live_episodes
    from rc1.train.live_tools import with_tool_calling
    from rc1.train.tiny_model import build_tiny_qwen3
    from rc1.train.warm_start import warm_start

    shutil.copytree(REPO / "configs", work / "configs")
    live = ["--set", "data.episodes=live"]
    subprocess.run(
        [sys.executable, "-m", "rc1", "advance", "--until", "R1_PASSED", "--config", "configs/local.yaml", *live],
        cwd=work,
        check=True,
        capture_output=True,
        env={**os.environ, "CUDA_VISIBLE_DEVICES": ""},
    )
    loaded = load_config(work / "configs" / "local.yaml", ["data.episodes=live"])
    config, ws = loaded.config, Workspace(root=work, run=loaded.config.run.name)
    pool, shadow = read_items(ws.balanced_pool_path), read_items(ws.shadow_path)
    texts, pairs = _live_gold(pool)
    if fresh:
        _, more = _live_gold(dress_items(loaded, build_pool(fresh, config.data.mix, FRESH_SEED), FRESH_SEED, "warm"))
        pairs = pairs + more
    seed = config.run.seed
    base = build_tiny_qwen3(texts, work / "models" / "base", seed, WIDE if wide else None)
    started = time.perf_counter()
    out, _ = warm_start(base, work / "models" / f"sft{steps}", pairs, steps=steps, seed=seed)
    seconds = time.perf_counter() - started
    tokenizer = with_tool_calling(AutoTokenizer.from_pretrained(out))
    model = AutoModelForCausalLM.from_pretrained(out)
    rollouts = run_live_episodes(
        model,
        tokenizer,
        shadow,
        max_completion_tokens=512,
        max_tool_rounds=config.data.max_tool_rounds,
        device="cpu",
    )
    by_id = {item.id: item for item in shadow}
    return read_copying([(by_id[r.item_id], r.transcript) for r in rollouts]), seconds


def _value(flag: str, default: int) -> int:
    return int(sys.argv[sys.argv.index(flag) + 1]) if flag in sys.argv else default


def bench_warm_copy() -> None:
    steps, fresh, wide = _value("--steps", 400), _value("--fresh", 0), "--wide" in sys.argv
    label = f"{steps} steps{f', {fresh} fresh items' if fresh else ''}{', wide model' if wide else ''}"
    with tempfile.TemporaryDirectory() as tmp:
        reading, seconds = measure(Path(tmp), steps=steps, fresh=fresh, wide=wide)
    report(reading, f"{label} ({seconds:.0f} s)")
