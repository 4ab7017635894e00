"""`make bench`, the sampler gap's cost (`python -m rc1.bench --sampler-gap-only`): where transformers samples a TRL
trainer's rollouts, rc1 scores a few rows of each `generate` call again with the trainer (rc1/train/sampler_gap.py)
for the sampler_mismatch rule. The embedded default's GRPO steps through `TrlEngine.train`, the rule on (as every
run has it) and off (`monitors.sampler_mismatch: null`), alternated, best of each, in one run."""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

STEPS = 20


def bench_sampler_gap(repeat: int = 2) -> None:
    import msgspec
    import torch

    from rc1.bench.training import prepared_default
    from rc1.train.engines import build_engine
    from rc1.train.model_loading import load_policy
    from rc1.train.protocols import NoHooks

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        loaded, pool, reward_fn, model_dir = prepared_default(root)
        config = loaded.config
        config = msgspec.structs.replace(config, train=msgspec.structs.replace(config.train, max_steps=STEPS))
        without = msgspec.structs.replace(
            config, monitors=msgspec.structs.replace(config.monitors, sampler_mismatch=None)
        )

        def seconds(chosen) -> float:
            model, tokenizer = load_policy(chosen.model, chosen.finetune.method, "cpu", torch.float32, model_dir)
            engine = build_engine(chosen, pool, reward_fn, model, tokenizer, root / "staging", "cpu")
            start = time.perf_counter()
            engine.train(NoHooks(), resume_from=None)
            took = time.perf_counter() - start
            engine.close()
            shutil.rmtree(root / "staging", ignore_errors=True)
            return took

        on, off = float("inf"), float("inf")
        for _ in range(repeat):  # alternated, best of each
            off = min(off, seconds(without))
            on = min(on, seconds(config))
        print(f"sampler gap: {STEPS} GRPO steps of the embedded default (recorded, trl engine), best of {repeat}")
        print(f"  monitors.sampler_mismatch null : {off:.1f} s")
        print(f"  measured (the default)         : {on:.1f} s   ratio {on / off:.3f}x")
