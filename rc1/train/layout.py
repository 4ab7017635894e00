"""rc1's checkpoint layout, whatever engine wrote it (`step_XXXXX/` once published):

  the weights, by `finetune.method`:
    lora, qlora: adapter_model.safetensors,     the LoRA adapter (peft's format: loadable alone onto the base)
                 adapter_config.json
    full:        model.safetensors, config.json  every weight of the model (transformers' format), as the trainer
                                                 saved it, with whatever it saves beside them (generation_config.json)
  optimizer.pt, scheduler.pt                       the optimizer and the learning-rate schedule
  scaler.pt                                        the fp16 loss scaler, where the engine used one
  rng.pt                                           python, numpy, cpu (and cuda/mps) RNG states
  sampler.json                                     where the data schedule stands (checked on resume)
  strategy.pt                                      the strategy's own state (PPO's value head, GRPO's β)
  trainer_state.json                               trl engine only: its trainer's step counter and log
  rc1_meta.json                                    written by the stage when it publishes

Which weight files a checkpoint must hold is the run's `finetune.method`, said by the caller: a directory's
files alone cannot tell a full checkpoint missing its weights from an adapter one. A model above
transformers' shard size (50 GB) would be saved in shards, and such a checkpoint is refused as incomplete.

The trl engine's trainer writes its own names; `from_trainer` renames them into this layout, and
`trainer_view` shows a published checkpoint back to the trainer under its names for a resume.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import torch

ADAPTER, ADAPTER_CONFIG = "adapter_model.safetensors", "adapter_config.json"
FULL_WEIGHTS, MODEL_CONFIG = "model.safetensors", "config.json"
WEIGHTS = {"lora": (ADAPTER, ADAPTER_CONFIG), "qlora": (ADAPTER, ADAPTER_CONFIG), "full": (FULL_WEIGHTS, MODEL_CONFIG)}
OPTIMIZER, SCHEDULER, RNG, SAMPLER, STRATEGY = "optimizer.pt", "scheduler.pt", "rng.pt", "sampler.json", "strategy.pt"
STATE = (OPTIMIZER, SCHEDULER, RNG, SAMPLER, STRATEGY)
TRAINER_STATE = "trainer_state.json"  # the trl engine's: its trainer's step counter and log
_TRAINER_NAMES = {RNG: "rng_state.pth"}  # HF Trainer's name for rc1's file
_RANK0_RNG = "rng_state_0.pth"  # its name in a multi-process run, where every rank saves its own
_TRAINER_ONLY = ("training_args.bin",)  # pickled arguments: the run's config says the same, and a resume never reads it


def required(method: str) -> tuple[str, ...]:
    """The files a checkpoint of a `finetune.method` run must hold."""
    return WEIGHTS[method] + STATE


def write_state(directory: Path, sampler: dict, strategy: dict) -> None:
    (directory / SAMPLER).write_text(json.dumps(sampler, sort_keys=True) + "\n", encoding="utf-8")
    torch.save(strategy, directory / STRATEGY)


def read_sampler(directory: Path) -> dict:
    """The checkpoint's sampler state (rc1.train.sampler), as the sampler's `load_state_dict` takes it."""
    state = json.loads((directory / SAMPLER).read_text(encoding="utf-8"))
    if "next_step" not in state:  # written before samplers had kinds: passes, counted in prompts
        state["next_step"] = state["next_prompt"] // state["prompts_per_step"] + 1
    return state


def missing(directory: Path, method: str) -> list[str]:
    return [name for name in required(method) if not (directory / name).is_file()]


def from_trainer(staged: Path, sampler: dict, strategy: dict) -> None:
    """Turn an HF Trainer checkpoint directory into rc1's layout, in place (before it is published)."""
    for ours, theirs in _TRAINER_NAMES.items():
        if (staged / theirs).exists():
            os.replace(staged / theirs, staged / ours)
    if (staged / _RANK0_RNG).exists():  # a multi-process run: rank r saved rng_state_<r>.pth; rank 0's is rc1's rng.pt
        os.replace(staged / _RANK0_RNG, staged / RNG)
    for name in _TRAINER_ONLY:
        (staged / name).unlink(missing_ok=True)
    write_state(staged, sampler, strategy)


def trainer_view(checkpoint: Path, view: Path) -> Path:
    """A directory of links that shows `checkpoint` to an HF Trainer under the names it reads."""
    shutil.rmtree(view, ignore_errors=True)
    view.mkdir(parents=True)
    for path in checkpoint.iterdir():
        os.symlink(path.resolve(), view / path.name)
    for ours, theirs in _TRAINER_NAMES.items():
        if (checkpoint / ours).exists():
            os.symlink((checkpoint / ours).resolve(), view / theirs)
    if (checkpoint / RNG).exists():  # what rank 0 of a multi-process resume reads
        os.symlink((checkpoint / RNG).resolve(), view / _RANK0_RNG)
    return view
