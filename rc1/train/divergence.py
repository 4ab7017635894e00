"""How either engine tells a diverged run: a non-finite loss or KL, or a non-finite trainable weight after
an optimizer step, is a `TrainingError` naming the step and what to do, never a silently poisoned run."""

from __future__ import annotations

import math

import torch

from rc1.errors import TrainingError
from rc1.train.metrics import StepMetrics

ADVICE = "Lower train.learning_rate, check the rewards, or resume from an earlier checkpoint"


def diverged(step: int, what: str) -> TrainingError:
    return TrainingError(f"step {step}: {what}; training diverged. {ADVICE}")


def check_metrics(metrics: StepMetrics) -> None:
    for name in ("loss", "kl"):
        value = getattr(metrics, name)
        if not math.isfinite(value):
            raise diverged(metrics.step, f"{name} is {value}")


def check_weights(model: torch.nn.Module, step: int) -> None:
    for name, param in model.named_parameters():
        if param.requires_grad and not torch.isfinite(param).all():
            raise diverged(step, f"trainable weight {name} is not finite after the optimizer step")
