"""The sha256 of a sample of a model's frozen tensors: what `training_started.frozen_sha256` and
`checkpoint_saved.frozen_sha256` record, and the always-on frozen_base guard compares (rc1/run/monitors/rules/).

The sample: of the parameters that do not train, sorted by name, `SAMPLED` evenly spaced ones (the first and the last
among them), so the same model gives the same names on every segment of a line and on every rank. Hashing a tensor
copies it to the CPU: Qwen3-4B's sampled projections in bf16 are tens of MB, milliseconds on a GPU's link. A full
fine-tune freezes nothing (an empty record); a model sharded across processes (FSDP2, ZeRO-3) holds its shard only,
and is not sampled either (an empty record: the guard reads nothing there).

`RC1_TEST_MOVE_BASE_AT=<step>` is a test hook, as rc1/core/failpoints.py's kill points are: at that step's checkpoint
the first sampled tensor is nudged in place by one unit in its last place (what a vLLM sync's in-place merge and
unmerge does to a bf16 weight), so a test can show the guard halting a real run. Unset, as in every real run, it
costs one lookup per checkpoint."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import torch

from rc1.core import distributed

SAMPLED = 8
MOVE_ENV = "RC1_TEST_MOVE_BASE_AT"


def sampled_frozen(model) -> list[tuple[str, torch.Tensor]]:
    """The sampled frozen parameters of a model with an adapter, (name, tensor); [] for a full fine-tune."""
    if not hasattr(model, "get_base_model") or distributed.sharded(model):
        return []
    frozen = sorted((name, p) for name, p in model.named_parameters() if not p.requires_grad)
    if len(frozen) <= SAMPLED:
        return frozen
    last = len(frozen) - 1
    return [frozen[round(i * last / (SAMPLED - 1))] for i in range(SAMPLED)]


def frozen_sha256(model) -> dict[str, str]:
    """name -> sha256 of the sampled frozen tensor's bytes (dtype and shape included, so a cast is a change)."""
    hashes = {}
    for name, tensor in sampled_frozen(model):
        data = tensor.detach().contiguous().cpu()
        digest = hashlib.sha256(f"{data.dtype}|{tuple(data.shape)}|".encode())
        digest.update(data.view(torch.uint8).numpy().tobytes() if data.numel() else b"")
        hashes[name] = digest.hexdigest()
    return hashes


def frozen_sha256_under(base, adapter_checkpoint: Path) -> dict[str, str]:
    """`frozen_sha256` of `base` with a checkpoint's LoRA adapter put on it as training wrapped it (the same parameters
    frozen, under the same names), for a base loaded outside training (`rc1 export`); the adapter is taken off again."""
    from peft import PeftModel

    wrapped = PeftModel.from_pretrained(base, str(adapter_checkpoint), is_trainable=True)
    try:
        return frozen_sha256(wrapped)
    finally:
        wrapped.unload()


def planted_move(model, step: int) -> None:
    """The test hook (module docstring): nudge the first sampled frozen tensor at `step`."""
    at = os.environ.get(MOVE_ENV)
    if not at or int(at) != step:
        return
    sample = sampled_frozen(model)
    if sample:
        with torch.no_grad():
            flat = sample[0][1].view(-1)
            bits = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[flat.element_size()]
            flat.view(bits)[0] += 1  # the next representable value up
