"""What this launch can train, decided from the config and the launch's environment alone: who samples the rollouts,
each process's gradient accumulation, and the launches rc1 refuses (exit 2, by name).

Nothing here loads a model or imports transformers, so `rc1 train` refuses an unsupported launch on every rank before
it imports the training stack or joins the process group (rc1/cli/commands/train.py), and again on each line's own
config before anything of the line is appended (rc1/app/train.py)."""

from __future__ import annotations

import importlib.util

from rc1.config.schema import Config, TrainConfig
from rc1.core import distributed
from rc1.core.errors import BadInput
from rc1.registry.engines import ENGINES
from rc1.registry.strategies import STRATEGIES


def refuse_unsupported_launch(config: Config) -> None:
    """Exit 2 for what this launch cannot train: sharding rc1 cannot evaluate under, vLLM where it cannot run, a
    fixed step batch the processes cannot share, several processes for a one-process engine. (A top-p cut is no longer
    refused on deterministic CUDA: rc1 computes it in fixed point, rc1/train/nucleus.py.)"""
    from rc1.train.device import select_device

    device = select_device()
    distributed.require_supported_sharding(device, config.finetune.method)
    rollout_backend(config, device)
    launch_accumulation(config.train)
    if distributed.world_size() > 1 and not ENGINES[config.engine.name].multi_process:
        launchable = ", ".join(name for name, spec in ENGINES.items() if spec.multi_process)
        raise BadInput(
            f"engine.name: {config.engine.name} trains in one process; a multi-process launch needs an "
            f"engine whose trainers run on accelerate ({launchable})"
        )


def rollout_backend(config: Config, device: str) -> str:
    """`generation_backend` of this config on `device`."""
    train = config.train
    return generation_backend(
        config.engine.name, config.engine.strategy, device, train.rollouts, quantized=config.finetune.method == "qlora"
    )


def generation_backend(
    engine: str, strategy: str, device: str, choice: str = "auto", *, quantized: bool = False
) -> str:
    """Who samples the training rollouts (`train.rollouts`): "vllm" (TRL's use_vllm, colocated), "vllm_server" (TRL's
    server mode) or "hf" (transformers' generate). auto picks vllm where the strategy's TRL recipe samples through it
    (GRPO, RLOO) on the trl engine, vllm is installed, the device is CUDA and the base is not `quantized` (TRL would
    merge the adapter into the 4-bit base and push its packed weights, which vLLM refuses: config refuses asking for
    it, rc1/config/rules.py), hf otherwise; asking for vLLM where it cannot run is exit 2, by name."""
    trl = STRATEGIES[strategy].trl if engine == "trl" else None
    possible = trl is not None and trl.vllm and not quantized
    runnable = device == "cuda" and importlib.util.find_spec("vllm") is not None
    if choice == "transformers" or (choice == "auto" and not (possible and runnable)):
        return "hf"
    if choice == "auto":
        return "vllm"
    if quantized:
        raise BadInput(
            f"train.rollouts: {choice} cannot sample for finetune.method qlora (TRL pushes the 4-bit base to vLLM); "
            "use finetune.method lora, or train.rollouts: transformers"
        )
    if not possible:
        samplers = ", ".join(name for name, spec in STRATEGIES.items() if spec.trl is not None and spec.trl.vllm)
        raise BadInput(
            f"train.rollouts: {choice} samples through TRL's vLLM, which only the trl engine's {samplers} "
            f"trainers do (this run: {engine} × {strategy}); set train.rollouts: transformers"
        )
    if device != "cuda":
        raise BadInput(
            f"train.rollouts: {choice} needs CUDA GPUs (this run trains on {device}); set train.rollouts: transformers"
        )
    if not runnable:
        raise BadInput(f"train.rollouts: {choice} needs vllm, which is not installed: pip install -e '.[vllm]'")
    return "vllm" if choice == "vllm" else "vllm_server"


def launch_accumulation(train: TrainConfig) -> int:
    """Each process's gradient accumulation under this launch: the configured one, or with `train.step_batch: fixed`
    the configured one divided among the processes, so a step trains on the one-process batch (exit 2 when they do
    not divide it)."""
    processes = distributed.world_size()
    if train.step_batch == "scales" or processes == 1:
        return train.gradient_accumulation_steps
    if train.gradient_accumulation_steps % processes:
        fits = sorted(
            {n for n in range(1, train.gradient_accumulation_steps + 1) if train.gradient_accumulation_steps % n == 0}
        )
        raise BadInput(
            f"train.step_batch: fixed keeps a step at per_device_batch_size × gradient_accumulation_steps "
            f"({train.per_device_batch_size} × {train.gradient_accumulation_steps}) completions, which "
            f"{processes} processes cannot share evenly: launch {', '.join(map(str, fits))} processes, or "
            f"set train.gradient_accumulation_steps to a multiple of {processes} (and per_device_batch_size "
            "to keep the batch), or train.step_batch: scales"
        )
    return train.gradient_accumulation_steps // processes


def exact_resume(config: Config, device: str, backend: str) -> bool:
    """Whether a resume of this line re-trains bit-identical steps (training_started.exact_resume): on the CPU it
    does (the suite kills and resumes runs on every engine and compares them bit for bit); on CUDA only with
    train.deterministic (rc1/train/device.py `deterministic_kernels`) and transformers' generate, as vLLM's sampling
    is not reproducible; on MPS rc1 does not know (not tested), so no. Not measured on a GPU here: docs/gpu.md."""
    if device == "cpu":
        return True
    return device == "cuda" and config.train.deterministic and backend == "hf"
