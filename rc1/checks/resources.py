"""Resource checks: enough free disk where the run writes (checkpoints, logs, data), and enough accelerator memory for
the config's memory plan."""

from __future__ import annotations

import shutil
from importlib.util import find_spec
from pathlib import Path

from rc1.checks.memory_plan import MemoryPlan, ModelShape, plan
from rc1.checks.result import CheckResult
from rc1.checks.spec import Check, Floor
from rc1.config.schema import Config
from rc1.core.catalog import PRODUCTION_PATH_PROFILES, is_builtin
from rc1.core.runbook import Runbook
from rc1.registry.strategies import STRATEGIES
from rc1.scoring.archive import archive_estimate_gb


def free_disk(path: Path, min_free_gb: float, archive_gb: float = 0.0) -> CheckResult:
    """Free space on the filesystem that holds `path`, measured at its nearest existing ancestor (the
    run may not have created `path` yet): the configured floor plus what the rollout archive will take at most."""
    path = Path(path).absolute()
    probe = next(p for p in (path, *path.parents) if p.exists())
    free_gb = shutil.disk_usage(probe).free / 1e9
    need = min_free_gb + archive_gb
    return CheckResult(
        name="free_disk",
        passed=free_gb >= need,
        measured={"free_gb": free_gb, "archive_gb": archive_gb},
        thresholds={"min_free_gb": min_free_gb, "need_gb": need},
        detail=f"{free_gb:.1f} GB free at {probe} (need {min_free_gb:g} GB + {archive_gb:.2f} GB for the rollout "
        "archive at most)",
    )


def accelerator_memory(config: Config) -> CheckResult:
    """Free memory on the accelerator training will use (CUDA): at least preflight.min_accelerator_memory_gb, and at
    least the peak the memory plan gives for this config and model on one process (rc1/checks/memory_plan.py); with
    no CUDA present there is nothing to check."""
    import torch

    min_free_gb = config.preflight.min_accelerator_memory_gb
    if not torch.cuda.is_available():
        return CheckResult(
            name="accelerator_memory",
            passed=True,
            measured={"present": 0.0},
            thresholds={"min_free_gb": min_free_gb},
            detail="no CUDA accelerator: training runs on the CPU",
        )
    free, total = torch.cuda.mem_get_info()
    free_gb, total_gb = free / 1e9, total / 1e9
    planned, why = _planned(config)
    # Colocated vLLM takes its share of the whole GPU on top of what training holds (TRL's vllm_gpu_memory_utilization)
    vllm_gb = config.train.vllm_gpu_memory_utilization * total_gb if _colocated_vllm(config) else 0.0
    need = max(min_free_gb, (planned.peak / 1e9 if planned is not None else 0.0) + vllm_gb)
    measured = {"present": 1.0, "free_gb": free_gb, "total_gb": total_gb}
    if planned is not None:
        measured |= {
            f"planned_{name}_gb": planned.phase(name) / 1e9 for name in ("rollouts", "micro_batch", "evaluation")
        }
        measured["planned_peak_gb"] = planned.peak / 1e9
    if vllm_gb:
        measured["vllm_gb"] = vllm_gb
    # A production run does not go on a GPU rc1 could not plan for: the floor alone says nothing about 8,192 tokens.
    unplanned = planned is None and config.profile in PRODUCTION_PATH_PROFILES
    return CheckResult(
        name="accelerator_memory",
        passed=free_gb >= need and not unplanned,
        measured=measured,
        thresholds={"min_free_gb": min_free_gb, "need_gb": need},
        detail=f"{torch.cuda.get_device_name()}: {free_gb:.1f} of {total_gb:.1f} GB free (need {need:.1f} GB: "
        + (f"the planned peak of {config.model.name}, docs/gpu.md)" if planned is not None else f"{why})")
        + (
            f"; the {config.profile} profile needs a memory plan: make the model's config.json readable"
            if unplanned
            else ""
        ),
    )


def _colocated_vllm(config: Config) -> bool:
    """Whether training would sample through vLLM on its own GPU: asked for, or `auto` where it can run (vllm
    installed, a base vLLM can take; rc1/train/launch.py `generation_backend` decides the same at launch)."""
    train = config.train
    if train.rollouts == "vllm":
        return True
    recipe = STRATEGIES[config.engine.strategy].trl
    samples = config.engine.name == "trl" and recipe is not None and recipe.vllm
    return train.rollouts == "auto" and samples and config.finetune.method != "qlora" and find_spec("vllm") is not None


def _planned(config: Config) -> tuple[MemoryPlan | None, str]:
    """The memory plan of this config for its model on one process, or why there is none."""
    if is_builtin(config.model.name):
        return None, "the built-in model is not planned"
    from transformers import AutoConfig

    try:
        model = AutoConfig.from_pretrained(config.model.name).get_text_config().to_dict()
        shape = ModelShape.of(model)
    except (OSError, KeyError, ValueError) as e:
        return None, f"no memory plan: {config.model.name}'s config cannot be read ({type(e).__name__})"
    return plan(shape, config), ""


FREE_DISK = Check(
    name="free_disk",
    rounds=(1, 2),
    thresholds={"preflight.min_free_disk_gb": Floor("min", 50.0)},
    run=lambda r: free_disk(r.ws.root, r.config.preflight.min_free_disk_gb, archive_gb=archive_estimate_gb(r.config)),
    runbook=Runbook(
        means="the filesystem of the working directory (the workspace) has less free space than "
        "preflight.min_free_disk_gb plus the rollout archive's largest size",
        tries=(
            "free space there, or run rc1 from a working directory on a larger disk",
            "shrink the archive: rollouts.keep_text=every_n_steps (rollouts.every_n_steps) or none; it grows with "
            "train.max_steps, train.max_completion_tokens, data.shadow_size and run.seeds",
            "production may not lower preflight.min_free_disk_gb below 50 (PRODUCTION_FLOORS); lower it only on "
            "the local profile",
        ),
    ),
)


ACCELERATOR_MEMORY = Check(
    name="accelerator_memory",
    rounds=(1, 2),
    thresholds={"preflight.min_accelerator_memory_gb": None},
    run=lambda r: accelerator_memory(r.config),
    runbook=Runbook(
        means="the CUDA device has less free memory than preflight.min_accelerator_memory_gb or than the memory plan "
        "of this config (rc1/checks/memory_plan.py: the KV cache of a step's replies at prompt + completion tokens "
        "dominates), or another process holds it",
        tries=(
            "read the plan's phases in the check's measured values; the KV cache grows with "
            "train.max_completion_tokens and with per_device_batch_size × gradient_accumulation_steps",
            "free the GPU: nvidia-smi lists the processes holding its memory",
            "pick another device with CUDA_VISIBLE_DEVICES",
            "lower preflight.min_accelerator_memory_gb if the model fits in less (it has no production floor)",
        ),
    ),
)
