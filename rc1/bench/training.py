"""`make bench`, training: `train.max_steps` GRPO steps through rc1 against the same steps through a bare TRL
`GRPOTrainer` (same model, data, reward, seed, arguments), measured in one run; and tokens/s of the
torch engine's PPO against its GRPO.

- bare TRL: `GRPOTrainer(...).train()` on the arguments `trl_args` gives rc1 (checkpoints included);
- rc1 loop: `TrlEngine.train` with hooks that record nothing (rc1's bridge, staging, checks);
- rc1 process: `rc1 train` as a user runs it, which adds start-up, the step-0 and periodic shadow-set
  evaluations, publishing and hashing checkpoints and appending events.
The loop ratio is the one the target (≤ 1.05) is about; the process's additions are reported apart.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rc1.bench.train_time import time_table, where_the_time_went
from rc1.config.recorded import recorded_overrides, recorded_sets

REPO = Path(__file__).resolve().parents[2]
CONFIG = "configs/local.yaml"


def _rc1(root: Path, *args: str) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "rc1", *args, "--config", CONFIG, *recorded_sets()],
        cwd=root,
        capture_output=True,
        text=True,
        env={**os.environ, "CUDA_VISIBLE_DEVICES": ""},
    )
    if done.returncode != 0:
        raise SystemExit(f"bench: rc1 {' '.join(args)} exited {done.returncode}: {done.stderr.strip()[-600:]}")
    return time.perf_counter() - start


def prepared_default(root: Path):
    """The embedded default (recorded) gated in `root`: (loaded config, balanced pool, rc1's reward function, the
    warm-started built-in model's folder)."""
    from rc1.app.policy import builtin_model_dir, warm_start_dir
    from rc1.config.loading import load_config
    from rc1.core.workspace import Workspace
    from rc1.data.task import read_items
    from rc1.scoring.pipeline import ScoringPipeline, components_for, make_reward_fn, rule_scorer
    from rc1.scoring.weights import load_weights

    shutil.copytree(REPO / "configs", root / "configs")
    _rc1(root, "preflight", "--round", "1")
    _rc1(root, "preflight", "--round", "2")  # builds and warm-starts the built-in model (its shadow run)
    loaded = load_config(root / CONFIG, recorded_overrides())
    config = loaded.config
    ws = Workspace(root=root, run=config.run.name)
    pool = read_items(ws.balanced_pool_path)
    model_dir = warm_start_dir(builtin_model_dir(ws, config.run.seed), config.model.warm_start_steps)
    weights = load_weights(loaded.weights_path, components_for(loaded))
    reward_fn = make_reward_fn(config.reward, weights, ScoringPipeline(rule_scorer(loaded, thinking=False)))
    return loaded, pool, reward_fn, model_dir


def bench_training(repeat: int = 2) -> None:
    """`train.max_steps` GRPO steps of the embedded default, each way."""
    import torch

    from rc1.eventlog.log import read_log
    from rc1.run import events as ev
    from rc1.train.engines import build_engine
    from rc1.train.model_loading import load_policy
    from rc1.train.protocols import NoHooks

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        loaded, pool, reward_fn, model_dir = prepared_default(root)
        process = _rc1(root, "train")
        log = read_log(root / "events" / "local.jsonl").events
        loop_in_process = sum(e.sec_per_step for e in log if isinstance(e, ev.TrainStep))
        evals = sum(1 for e in log if isinstance(e, ev.EvalCompleted))
        config = loaded.config
        steps = config.train.max_steps

        def bare() -> float:
            return bare_grpo(config, pool, reward_fn, model_dir, root / "bare", "cpu").seconds

        def loop() -> float:
            model, tokenizer = load_policy(config.model, config.finetune.method, "cpu", torch.float32, model_dir)
            engine = build_engine(config, pool, reward_fn, model, tokenizer, root / "staging", "cpu")
            start = time.perf_counter()
            engine.train(NoHooks(), resume_from=None)  # the engine quiets the same warning itself
            seconds = time.perf_counter() - start
            shutil.rmtree(root / "staging", ignore_errors=True)
            return seconds

        bare_s, loop_s = float("inf"), float("inf")
        for _ in range(repeat):  # alternated, best of each: neither pays the other's warm-up
            bare_s = min(bare_s, bare())
            loop_s = min(loop_s, loop())
        print(
            f"training: {steps} GRPO steps of the embedded default (trl engine, finetune.method "
            f"{config.finetune.method}), best of {repeat}"
        )
        print(f"  bare TRL GRPOTrainer.train()   : {bare_s:.1f} s")
        print(f"  rc1 loop (TrlEngine.train) : {loop_s:.1f} s   ratio {loop_s / bare_s:.3f}x bare (target ≤ 1.05)")
        print(
            f"  rc1 train (process)            : {process:.1f} s   ratio {process / bare_s:.2f}x bare (target ≤ 1.10); "
            f"of it {loop_in_process:.1f} s in steps ({loop_in_process / bare_s:.3f}x bare, target ≤ 1.03), the rest "
            f"start-up, {evals} shadow-set evaluations, publishing, the gate-set evaluation of the selected checkpoint:"
        )
        print(time_table(where_the_time_went(log, process), bare_s), flush=True)
        last = max(e.step for e in log if isinstance(e, ev.CheckpointSaved))
        print(retrain_line(root, last), flush=True)
        _bench_torch_strategies(loaded, pool, reward_fn, model_dir, root, min(steps, 40))


def retrain_line(root: Path, step: int) -> str:
    """`rc1 audit --retrain step_<step>` on the run just trained: its steps trained again from the checkpoint before,
    per step against the line's own recorded s/step (measured in the same bench run), and whether bit for bit."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "rc1", "audit", "--retrain", f"step_{step}", "--json", "--config", CONFIG],
        cwd=root,
        capture_output=True,
        text=True,
        env={**os.environ, "CUDA_VISIBLE_DEVICES": ""},
    )
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 3):
        raise SystemExit(f"bench: rc1 audit --retrain exited {done.returncode}: {done.stderr.strip()[-600:]}")
    [report] = json.loads(done.stdout)["retrain"]
    per_step = report["train_seconds"] / len(report["steps"])
    return (
        f"  rc1 audit --retrain step_{step} (from {report['start']}): {len(report['steps'])} steps trained again, "
        f"{per_step:.2f} s/step, ratio {per_step / report['recorded_sec_per_step']:.2f}x the line's recorded "
        f"{report['recorded_sec_per_step']:.2f} s/step; the command {seconds:.1f} s; "
        f"{'re-derived bit for bit' if report['verified'] else 'NOT re-derived: see rc1 audit --retrain'}"
    )


class BareRun:
    """A bare GRPOTrainer's run: its wall time, and for each step when its log came (the trainer's on_log, the point
    where rc1 appends its train_step) and its completion tokens."""

    def __init__(self):
        self.seconds = 0.0
        self.logged_at: list[float] = []
        self.tokens: list[float] = []


def bare_grpo(config, pool, reward_fn, model_dir: Path, out: Path, device: str) -> BareRun:
    """`config.train.max_steps` steps of TRL's `GRPOTrainer` on the arguments `trl_args` gives rc1, the same model
    (loaded by rc1's `load_policy`: 4-bit on CUDA for qlora), prompts in the schedule's order, rc1's reward."""
    from datasets import Dataset
    from transformers import TrainerCallback
    from transformers.trainer_callback import PrinterCallback
    from trl import GRPOTrainer

    from rc1.train.device import select_dtype
    from rc1.train.engine_trl import _quiet_renamed_property, adapter_in_fp32, trl_args
    from rc1.train.model_loading import load_policy, lora_config
    from rc1.train.prompts import fit_prompt
    from rc1.train.schedule import schedule

    run = BareRun()

    class Timed(TrainerCallback):
        def on_log(self, args, state, control, logs=None, **kwargs):
            if logs and "loss" in logs:
                run.logged_at.append(time.perf_counter())
                run.tokens.append(float(logs["completions/mean_length"]) * args.generation_batch_size)

    dtype = select_dtype(device, config.model.dtype)
    model, tokenizer = load_policy(config.model, config.finetune.method, device, dtype, model_dir)
    args = trl_args(config, out, device, dtype)
    prompts = [fit_prompt(tokenizer, item, config.train.max_prompt_tokens)[0] for item in pool]
    order = schedule(
        len(pool), config.train.max_steps * (args.generation_batch_size // args.num_generations), config.run.seed
    )
    dataset = Dataset.from_dict({"prompt": [prompts[i] for i in order], "item_index": order})

    def reward(prompts, completions, item_index, completion_ids, **_):
        return reward_fn([pool[i] for i in item_index], list(completions), [len(c) for c in completion_ids])

    with _quiet_renamed_property():
        trainer = GRPOTrainer(
            model=model,
            reward_funcs=[reward],
            args=args,
            train_dataset=dataset,
            processing_class=tokenizer,
            peft_config=None if config.finetune.method == "full" else lora_config(config.model),
            callbacks=[Timed()],
        )
        trainer.remove_callback(PrinterCallback)
        if config.finetune.method == "qlora":
            adapter_in_fp32(trainer.model)  # as rc1's engine trains it: the comparison is of the loops, not the dtype
        start = time.perf_counter()
        trainer.train()
    run.seconds = time.perf_counter() - start
    shutil.rmtree(out, ignore_errors=True)
    return run


def _bench_torch_strategies(loaded, pool, reward_fn, model_dir: Path, root: Path, steps: int) -> None:
    import msgspec
    import torch

    from rc1.train.engines import build_engine
    from rc1.train.model_loading import load_policy

    rates = {}
    for strategy in ("grpo", "ppo"):
        config = loaded.config
        # The torch engine trains adapters (rc1/train/engine_torch.py); its strategies are compared on one.
        config = msgspec.structs.replace(
            config,
            engine=msgspec.structs.replace(config.engine, name="torch", strategy=strategy),
            finetune=msgspec.structs.replace(config.finetune, method="lora"),
        )
        model, tokenizer = load_policy(config.model, "lora", "cpu", torch.float32, model_dir)
        engine = build_engine(config, pool, reward_fn, model, tokenizer, root / f"staging-{strategy}", "cpu")
        tokens, start = 0, time.perf_counter()
        for step in range(1, steps + 1):
            tokens += engine.train_step(step).tokens
        rates[strategy] = tokens / (time.perf_counter() - start)
    print(f"torch engine, {steps} steps each, update_epochs {loaded.config.train.update_epochs}:")
    print(f"  grpo : {rates['grpo']:.0f} completion tokens/s")
    print(f"  ppo  : {rates['ppo']:.0f} completion tokens/s   ratio {rates['ppo'] / rates['grpo']:.2f}x grpo")
