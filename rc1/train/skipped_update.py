"""A test hook, unset in every real run: with `RC1_PLANT_SKIPPED_UPDATE=<step>` the trl engine's trainer silently
skips optimizer step <step>'s update of the weights. The gradients are computed and the optimizer's moments move on;
the step's train_step, the checkpoints after it, their manifests and sha256 are recorded as always. A fault every
record agrees with, which only `rc1 audit --retrain` finds (tests/e2e/test_retrain.py)."""

from __future__ import annotations

import os

import torch

ENV = "RC1_PLANT_SKIPPED_UPDATE"


class SkippedUpdate:
    """Before the planted step's optimizer.step the trainable weights are kept; after it they are put back."""

    def __init__(self) -> None:
        self._kept: list[torch.Tensor] | None = None

    def before(self, model: torch.nn.Module, step: int) -> None:
        at = os.environ.get(ENV)
        if at and int(at) == step:
            self._kept = [p.detach().clone() for p in model.parameters() if p.requires_grad]

    def after(self, model: torch.nn.Module) -> None:
        if self._kept is None:
            return
        with torch.no_grad():
            for param, kept in zip((p for p in model.parameters() if p.requires_grad), self._kept, strict=True):
                param.copy_(kept)
        self._kept = None
