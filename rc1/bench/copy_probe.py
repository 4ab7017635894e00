"""`python -m rc1.bench --copy-probe-only` (part of `make bench`; issue 50): what the built-in models copy, before and
after the reader.

Round 1 of the embedded default (configs/local.yaml: live episodes, a page per name) in a fresh workspace gives the
pool the warm starts learn from. Held-out prompts (rc1/reader/probe.py) go to each model:
- before: the tiny model (random initialisation, its tokenizer trained on the pool) warm-started on the pool's gold
  turns for `TINY_WARM_START` steps, the warm start issue 43's live arms used, on the same gold paths as the reader's;
- the reader as shipped (rc1/reader/weights), before any warm start;
- the reader warm-started as the embedded default warm-starts it (model.warm_start_steps).
Per model: the exact-span copy rate of held-out random-token segments, and greedy live episodes of `ITEMS` held-out
items (a stream of their own, dressed as the pool is): wiki calls that opened a page, wiki titles copied from the
question or a result read, calc calls on given numbers, each with its 95 % Wilson interval.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TINY_WARM_START = 400
ITEMS = 120
PROBE_STREAM_SEED = 424_242


def bench_copy_probe(items: int = ITEMS) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for label, reading in measure(Path(tmp), items):
            print(label, flush=True)
            for line in reading:
                print(f"  {line}", flush=True)


def measure(work: Path, items: int) -> list[tuple[str, list[str]]]:

    from rc1.app.datasets import dress_items
    from rc1.app.policy import gold_texts, live_pairs
    from rc1.config.loading import load_config
    from rc1.core.workspace import Workspace
    from rc1.data.environment import wiki_view
    from rc1.data.pool import build_pool
    from rc1.data.task import read_items
    from rc1.reader.shipped import reader_dir
    from rc1.train.tiny_model import build_tiny_qwen3
    from rc1.train.warm_start import warm_start

    shutil.copytree(REPO / "configs", work / "configs")
    subprocess.run(
        [sys.executable, "-m", "rc1", "advance", "--until", "R1_PASSED", "--config", "configs/local.yaml"],
        cwd=work,
        check=True,
        capture_output=True,
        env={**os.environ, "CUDA_VISIBLE_DEVICES": ""},
    )
    loaded = load_config(work / "configs" / "local.yaml")
    config, ws = loaded.config, Workspace(root=work, run=loaded.config.run.name)
    pool = read_items(ws.balanced_pool_path)
    held = dress_items(loaded, build_pool(items, config.data.mix, PROBE_STREAM_SEED), PROBE_STREAM_SEED, "copy-probe")
    pairs = live_pairs(pool, (), "mentions")
    seed = config.run.seed
    started = time.perf_counter()
    tiny = build_tiny_qwen3(gold_texts(pool, "mentions"), work / "models" / "tiny", seed)
    tiny, _ = warm_start(tiny, work / "models" / "tiny-warm", pairs, steps=TINY_WARM_START, seed=seed)
    tiny_seconds = time.perf_counter() - started
    started = time.perf_counter()
    steps = config.model.warm_start_steps
    warmed, _ = warm_start(reader_dir(), work / "models" / "reader-warm", pairs, steps=steps, seed=seed)
    reader_seconds = time.perf_counter() - started
    models = [
        (f"before: tiny-qwen3, warm-started {TINY_WARM_START} steps ({tiny_seconds:.0f} s)", tiny),
        ("after: the reader as shipped, no warm start", reader_dir()),
        (f"after: the reader warm-started {steps} steps, as the embedded default ({reader_seconds:.0f} s)", warmed),
    ]
    return [(label, _read(folder, held, wiki_view(config.data), config)) for label, folder in models]


def _read(folder: Path, held, wiki, config) -> list[str]:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from rc1.bench.live_arms import wilson
    from rc1.reader.probe import live_probe, repeat_probe
    from rc1.train.live_tools import with_tool_calling

    model = AutoModelForCausalLM.from_pretrained(folder)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    span = repeat_probe(model, len(tokenizer))
    live = live_probe(
        model,
        with_tool_calling(tokenizer),
        held,
        wiki,
        max_completion_tokens=config.train.max_completion_tokens,
        rounds=config.data.max_tool_rounds,
    )

    def share(count) -> str:
        return wilson(count.hits / count.of if count.of else 0.0, count.of)

    return [
        f"random-token spans repeated exactly   {share(span)}",
        f"wiki calls that opened a page         {share(live.wiki_opened)}  ({live.episodes} greedy episodes)",
        f"wiki titles copied (question, result) {share(live.wiki_copied)}",
        f"calc calls on given numbers           {share(live.calc_grounded)}",
    ]
