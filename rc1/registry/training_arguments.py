"""TrainingArguments keywords whose name differs between the transformers versions rc1 meets, picked from the
installed class's own fields rather than from a version number.

- Activation checkpointing: transformers 5.24 (here) names it `activation_checkpointing` and keeps
  `gradient_checkpointing` as a deprecated alias; 5.17 (the GPU image's) has only `gradient_checkpointing`, and
  `GRPOConfig(activation_checkpointing=…)` raises `unexpected keyword argument` there (issue 51; read in both
  versions' `training_args.py`).
"""

from __future__ import annotations

from dataclasses import fields
from functools import cache


@cache
def _field_names() -> frozenset[str]:
    from transformers import TrainingArguments

    return frozenset(f.name for f in fields(TrainingArguments))


def checkpointing(on: bool) -> dict[str, bool]:
    """The keyword that switches activation checkpointing in the installed transformers, set to `on`."""
    name = "activation_checkpointing" if "activation_checkpointing" in _field_names() else "gradient_checkpointing"
    return {name: on}


def checkpointing_of(args) -> bool:
    """Whether `args` (a TrainingArguments) checkpoints activations, under either name."""
    if "activation_checkpointing" in _field_names():
        return bool(args.activation_checkpointing)
    return bool(args.gradient_checkpointing)
