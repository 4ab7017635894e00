"""Which accelerator and dtype a run uses: cuda → mps → cpu; bf16 where supported, fp16 on MPS, fp32 on CPU."""

from __future__ import annotations

import torch

from rc1.core.cuda_env import DETERMINISTIC_WORKSPACES
from rc1.core.errors import BadInput

_DTYPES: dict[str, torch.dtype] = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


def select_device() -> str:
    if torch.cuda.is_available():
        return "cuda"
    if torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def select_dtype(device: str, requested: str) -> torch.dtype:
    """Resolve `model.dtype` (auto, fp32, bf16, fp16) for `device`; refuse half precision on CPU."""
    if requested == "auto":
        if device == "cuda":
            return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        if device == "mps":
            return torch.float16
        return torch.float32
    if requested not in _DTYPES:
        raise BadInput(f"model.dtype: unknown dtype {requested!r}; use one of auto, fp32, bf16, fp16")
    if device == "cpu" and requested != "fp32":
        raise BadInput(f"model.dtype: {requested} is not supported on CPU; use fp32 or auto")
    if device == "cuda" and requested == "bf16" and not torch.cuda.is_bf16_supported():
        raise BadInput("model.dtype: bf16 is not supported on this GPU; use fp16 or auto")
    if device == "mps" and requested == "bf16":
        raise BadInput("model.dtype: bf16 is not supported on MPS; use fp16, fp32 or auto")
    return _DTYPES[requested]


def deterministic_kernels(device: str, on: bool) -> None:
    """`train.deterministic` on CUDA: torch's deterministic algorithms, strictly (warn_only would let the attention
    backends fall back to their non-deterministic backward), and cuDNN's deterministic choice. Under it torch's
    scaled_dot_product_attention keeps the flash and memory-efficient backends with their deterministic backward
    (cuDNN attention is not selected), and TRL 1.16's fused LM head (Triton) has no atomics. A no-op on the CPU,
    which computes the same bits run after run."""
    if device != "cuda" or not on:
        return
    import os

    if os.environ.get("CUBLAS_WORKSPACE_CONFIG") not in DETERMINISTIC_WORKSPACES:
        raise BadInput(
            "train.deterministic: CUBLAS_WORKSPACE_CONFIG must be :4096:8 or :16:8 before the process's first CUDA "
            f"matmul (it is {os.environ.get('CUBLAS_WORKSPACE_CONFIG')!r}); unset it and rc1 sets it, or set "
            "train.deterministic: false"
        )
    torch.use_deterministic_algorithms(True)
    # Strict mode also fills every new tensor with NaN or the largest int (a guard against reading memory no kernel
    # wrote), a cost on every allocation of a KV cache that grows by a token at a time; rc1's kernels write what they
    # read.
    torch.utils.deterministic.fill_uninitialized_memory = False
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
