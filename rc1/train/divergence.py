"""How either engine tells a diverged run: a non-finite gradient norm before the optimizer step, a non-finite loss or
KL in the step's report, a non-finite trainable weight after the step, or sampling that met non-finite probabilities.
Each is a `NonFiniteStep` naming the step and the value; the training stage records it as the always-on monitor
rule `non_finite` and the run halts (exit 3), before any checkpoint holding the damage is published."""

from __future__ import annotations

import math

import torch

from rc1.train.metrics import StepMetrics

# What torch.multinomial says when generation samples from NaN/inf logits.
NON_FINITE_SAMPLING = "probability tensor contains either `inf`, `nan` or element < 0"


class NonFiniteStep(Exception):
    """Step `step` met a value that is not finite; `measured` names it (loss, kl, grad_norm, a weight's norm)."""

    def __init__(self, step: int, what: str, measured: dict[str, float]):
        super().__init__(f"step {step}: {what}")
        self.step, self.what, self.measured = step, what, measured


def check_gradients(parameters, step: int) -> float:
    """The global L2 norm of the gradients about to be applied; NonFiniteStep when it is not finite (before the
    optimizer step, so the weights are untouched)."""
    grads = [p.grad for p in parameters if p.grad is not None]
    norm = float(torch.nn.utils.get_total_norm(grads)) if grads else 0.0
    if not math.isfinite(norm):
        raise NonFiniteStep(step, f"the gradient norm is {norm} before the optimizer step", {"grad_norm": norm})
    return norm


def check_metrics(metrics: StepMetrics) -> None:
    for name in ("loss", "kl"):
        value = getattr(metrics, name)
        if not math.isfinite(value):
            raise NonFiniteStep(metrics.step, f"{name} is {value}", {name: value})


def check_weights(model: torch.nn.Module, step: int) -> None:
    for name, param in model.named_parameters():
        if param.requires_grad and not torch.isfinite(param).all():
            raise NonFiniteStep(
                step,
                f"trainable weight {name} is not finite after the optimizer step",
                {"weight_norm": float(param.detach().float().norm())},
            )


def sampling_failed(step: int) -> NonFiniteStep:
    return NonFiniteStep(
        step,
        "sampling met non-finite probabilities (the policy's logits overflowed)",
        {"sampling_probabilities": math.nan},
    )
