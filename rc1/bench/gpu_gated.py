"""`make gpu-check`'s gated run: rc1's own CLI, from round 1 to the release verdict, on a small model of Qwen3-4B's
widths (2 layers 2,560 wide, 32 query and 8 key/value heads of 128, MLP 9,728; the vocabulary of a tokenizer trained
on the run's pool) trained as production trains (QLoRA on CUDA, GRPO through TRL, priority sampling, deterministic
kernels); killed with SIGKILL at a step and resumed; then the same steps through a bare TRL `GRPOTrainer`.

A random model never ends a reply, so the base is warm-started first on the pool's gold replies (rc1's warm start, on
the GPU) and the run's own gates on cut replies and flat groups are opened (preflight.max_cut_share and
max_no_signal_share 1.0: their measured values are still in the log). A dry run (no CUDA) does all of it on the CPU
with LoRA on a model 64 wide."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import yaml

from rc1.config.recorded import recorded_raw
from rc1.eventlog.log import read_log
from rc1.run import events as ev

REPO = Path(__file__).resolve().parents[2]
WIDTHS = {"hidden_size": 2560, "intermediate_size": 9728, "num_attention_heads": 32, "num_key_value_heads": 8}
SMALL_WIDTHS = {"hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 4, "num_key_value_heads": 2}
KILLED_AT = 4  # SIGKILLed as step 4 is recorded: steps 1-3 in the log, the checkpoint of step 2 to resume from
SAVE_STEPS = 2
COMPARED = ("loss", "kl", "reward", "reward_std", "grad_norm", "tokens", "components", "diagnostics")


def config_of(model_dir: Path, method: str) -> dict:
    """The embedded default, short (the suite's SHORT), on `model_dir` with `method` and priority sampling."""
    raw = recorded_raw(yaml.safe_load((REPO / "configs" / "local.yaml").read_text()))
    raw["run"]["name"] = "gpu-check"
    raw["data"] |= {"pool_size": 240, "shadow_size": 30}
    raw["shadow"] = {"samples": 2}
    raw["model"] |= {"name": str(model_dir), "dtype": "auto", "warm_start_steps": 0}
    raw["finetune"] = {"method": method}
    raw["train"] |= {
        "max_steps": 4,
        "save_steps": SAVE_STEPS,
        "eval_steps": SAVE_STEPS,
        "per_device_batch_size": 16,
        "num_generations": 4,
        "learning_rate": 1e-4,
        "deterministic": True,
    }
    raw["preflight"] |= {"max_cut_share": 1.0, "max_no_signal_share": 1.0, "min_accelerator_memory_gb": 0.0}
    raw["release"] |= {"gate_size": 60, "samples": 2, "min_hard_gain_pp": 10.0}
    raw["priority_sampling"] = {
        "by_difficulty": {"easy": 0.2, "medium": 0.4, "hard": 0.4},
        "low_perf_cap": 0.5,
        "seed_ratio_schedule": [[0, 1.0], [2, 0.5]],
    }
    return raw


def build_policy(root: Path, loaded, on_gpu: bool) -> Path:
    """The pool's tokenizer (rc1's built-in model's), a 2-layer Qwen3 of the production widths (64 wide in a dry run)
    with it, warm-started on the pool's gold replies."""
    from transformers import AutoTokenizer, Qwen3Config, Qwen3ForCausalLM

    from rc1.app.datasets import build_seed_pool
    from rc1.core.workspace import Workspace
    from rc1.scoring.rules import gold_reply
    from rc1.train.prompts import fit_prompt
    from rc1.train.tiny_model import build_tiny_qwen3
    from rc1.train.warm_start import warm_start

    config = loaded.config
    pool = build_seed_pool(loaded, Workspace(root=root, run=config.run.name))  # no task of its own to measure
    tiny = build_tiny_qwen3([f"{item.prompt}\nAnswer: {item.answer}" for item in pool], root / "tokenizer", 1234)
    tokenizer = AutoTokenizer.from_pretrained(tiny)
    eos = tokenizer.eos_token_id
    widths = WIDTHS if on_gpu else SMALL_WIDTHS
    model_config = Qwen3Config(
        vocab_size=len(tokenizer),
        num_hidden_layers=2,
        head_dim=128 if on_gpu else 16,
        tie_word_embeddings=True,
        max_position_embeddings=4096,
        eos_token_id=eos,
        pad_token_id=eos,
        **widths,
    )
    base = root / "base"
    model = Qwen3ForCausalLM(model_config)
    model.generation_config.eos_token_id = model.generation_config.pad_token_id = eos
    model.save_pretrained(base)
    tokenizer.save_pretrained(base)
    pairs = [(fit_prompt(tokenizer, item, config.train.max_prompt_tokens)[0], gold_reply(item)) for item in pool]
    out, _ = warm_start(base, root / "policy", pairs, steps=80, seed=1234, learning_rate=1e-3, on_cpu=not on_gpu)
    return out


def rc1(root: Path, *args: str, kill_at: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    if kill_at:
        env["RC1_KILL_AT"] = kill_at
    command = [sys.executable, "-m", "rc1", *args, "--config", "configs/gpu_check.yaml"]
    return subprocess.run(command, cwd=root, capture_output=True, text=True, env=env, timeout=1800)


def gated_run(root: Path, on_gpu: bool) -> dict:
    """Round 1 to the verdict through `rc1 advance --all`, SIGKILLed at step 4 and resumed; what the log recorded."""
    from rc1.config.loading import load_config

    started = time.perf_counter()
    shutil.copytree(REPO / "configs", root / "configs")
    (root / "data").mkdir()
    config_path = root / "configs" / "gpu_check.yaml"
    method = "qlora" if on_gpu else "lora"
    config_path.write_text(yaml.safe_dump(config_of(root / "models" / "policy", method)))
    loaded = load_config(config_path)
    build_policy(root / "models", loaded, on_gpu)
    built = time.perf_counter() - started
    killed = rc1(root, "advance", "--all", kill_at=f"step@{KILLED_AT}")
    resumed = rc1(root, "advance", "--all")
    try:
        log = read_log(root / "events" / "gpu-check.jsonl").events
    except Exception as error:  # a run that died before its log was whole: its exits and stderr are the finding
        return {
            "model_built_s": built,
            "killed_exit": killed.returncode,
            "killed_stderr_tail": killed.stderr[-1500:],
            "resumed_exit": resumed.returncode,
            "resumed_stderr_tail": resumed.stderr[-1500:],
            "log_error": f"{type(error).__name__}: {error}"[:1000],
            "seconds": time.perf_counter() - started,
        }
    steps = [e for e in log if isinstance(e, ev.TrainStep)]
    twice: dict[int, list[ev.TrainStep]] = {}
    for step in steps:
        twice.setdefault(step.step, []).append(step)
    twice = {n: both for n, both in twice.items() if len(both) > 1}
    status = rc1(root, "status", "--json")
    release = next((e for e in reversed(log) if isinstance(e, ev.ReleaseEvaluated)), None)
    thinking = next((e for e in log if isinstance(e, ev.CheckOutcome) and e.name == "thinking_fits"), None)
    return {
        "model_built_s": built,
        "killed_exit": killed.returncode,
        "killed_by_sigkill": killed.returncode == -signal.SIGKILL,
        "resumed_exit": resumed.returncode,
        "resumed_stderr_tail": resumed.stderr[-1500:] if resumed.returncode else "",
        "state": json.loads(status.stdout)["state"] if status.returncode == 0 else None,
        "training_started": [
            {k: getattr(e, k) for k in ("resume_from_step", "device", "dtype", "generation", "exact_resume")}
            for e in log
            if isinstance(e, ev.TrainingStarted)
        ],
        "steps_trained_again": sorted(twice),
        "steps_trained_again_identical": all(_same(a, b) for a, b in twice.values()) if twice else None,
        "thinking_fits": thinking.measured if thinking else None,
        "eval_mem_peak_mb": [e.mem_peak_mb for e in log if isinstance(e, ev.EvalCompleted)],
        "release": {
            k: getattr(release, k) for k in ("passed", "hard_gain_pp", "ci_low_pp", "ci_high_pp", "n", "samples")
        }
        if release
        else None,
        "rc1_tokens_per_s": step_to_step_rate(
            [s.step for s in steps], [_seconds(s.ts) for s in steps], [s.tokens for s in steps], SAVE_STEPS
        ),
        "seconds": time.perf_counter() - started,
    }


def step_to_step_rate(steps: list[int], at: list[float], tokens: list[float], save_steps: int) -> float | None:
    """Completion tokens per second over whole step cycles: step k's tokens over the time from step k−1's log to step
    k's (what a step costs with everything around it: hooks, events, trackers), for every k after a step of the same
    process that was not checkpointed (a checkpoint and an evaluation are not a step's cost)."""
    pairs = [
        (tokens[i], at[i] - at[i - 1])
        for i in range(1, len(steps))
        if steps[i] == steps[i - 1] + 1 and steps[i - 1] % save_steps and at[i] > at[i - 1]
    ]
    return sum(t for t, _ in pairs) / sum(s for _, s in pairs) if pairs else None


def bare_tokens_per_s(root: Path, device: str) -> float | None:
    """The gated run's steps through a bare TRL GRPOTrainer on the same model, data order, reward and arguments, with
    the same deterministic kernels."""
    from rc1.bench.training import bare_grpo
    from rc1.config.loading import load_config
    from rc1.core.workspace import Workspace
    from rc1.data.task import read_items
    from rc1.scoring.pipeline import ScoringPipeline, components_for, make_reward_fn, rule_scorer
    from rc1.scoring.weights import load_weights
    from rc1.train.device import deterministic_kernels

    loaded = load_config(root / "configs" / "gpu_check.yaml")
    ws = Workspace(root=root, run=loaded.config.run.name)
    pool = read_items(ws.balanced_pool_path)
    weights = load_weights(loaded.weights_path, components_for(loaded))
    reward_fn = make_reward_fn(loaded.config.reward, weights, ScoringPipeline(rule_scorer(loaded, thinking=False)))
    deterministic_kernels(device, loaded.config.train.deterministic)
    run = bare_grpo(loaded.config, pool, reward_fn, Path(loaded.config.model.name), root / "bare", device)
    steps = list(range(1, len(run.tokens) + 1))
    return step_to_step_rate(steps, run.logged_at, run.tokens, SAVE_STEPS)


def _seconds(ts: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(ts).timestamp()


def _same(a: ev.TrainStep, b: ev.TrainStep) -> bool:
    """A step trained twice came out the same: every number but its time and memory (and the envelope)."""
    return all(getattr(a, k) == getattr(b, k) for k in COMPARED)
