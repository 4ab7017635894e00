"""The policy a published checkpoint holds, put onto a freshly loaded base model: for evaluating a chosen
checkpoint (`rc1 shadow run --checkpoint best|step_N`, the release verdict), not for resuming its training.

- lora, qlora: the checkpoint's adapter over the base (peft's `PeftModel.from_pretrained`, inference mode);
- full: the checkpoint's `model.safetensors` copied into the base model's own weights, strictly.

Full weights go into the model the caller loaded rather than through `from_pretrained(directory)`: the model
keeps the dtype, device and attention `load_policy` gave it, and its config stays the base's (the checkpoint's
`config.json` is the trainer's, with `use_cache` off after gradient checkpointing); no second copy of the model
is loaded; and a checkpoint of another architecture is refused by name (weights missing or unexpected) where
`from_pretrained` would initialise what it lacks with a warning.
"""

from __future__ import annotations

from pathlib import Path

import torch
from peft import PeftModel
from safetensors import safe_open
from safetensors.torch import load_model

from rc1.core.errors import BadInput
from rc1.train import layout


def policy_at(model: torch.nn.Module, directory: Path, method: str) -> torch.nn.Module:
    """`model` (the base, as `load_policy` returns it) with the weights of the checkpoint in `directory`, trained
    with `finetune.method` `method`. Full: the same model object, its weights overwritten."""
    directory = Path(directory)
    absent = [name for name in layout.WEIGHTS[method] if not (directory / name).is_file()]
    if absent:
        raise BadInput(
            f"{directory}: holds no weights of a finetune.method {method} run (missing "
            f"{', '.join(absent)}); was it trained with another finetune.method?"
        )
    if method != "full":
        return PeftModel.from_pretrained(model, str(directory))
    path = directory / layout.FULL_WEIGHTS
    with safe_open(path, "pt") as saved:  # the header only: names and shapes
        shapes = {name: tuple(saved.get_slice(name).get_shape()) for name in saved.keys()}
    own = {name: tuple(tensor.shape) for name, tensor in model.state_dict().items()}
    reshaped = sorted(name for name in shapes.keys() & own.keys() if shapes[name] != own[name])
    if reshaped:
        raise BadInput(
            f"{path}: not the weights of this model (other shapes: {_names(reshaped)}); evaluate it "
            f"with the model.name it was trained from"
        )
    # Onto the CPU first (memory-mapped), then copied into each weight where it lives; tied weights (the
    # embeddings and the LM head) are saved once and count as loaded.
    missing, unexpected = load_model(model, path, strict=False, device="cpu")
    if missing or unexpected:
        raise BadInput(
            f"{path}: not the weights of this model (missing {_names(missing)}; unexpected "
            f"{_names(unexpected)}); evaluate it with the model.name it was trained from"
        )
    return model


def _names(names, shown: int = 4) -> str:
    names = sorted(names)
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more if names else "none"
