"""The data order every engine trains in (seeded, pass after pass over the items), and a learning rate changed
on a resume."""

from __future__ import annotations

import numpy as np
import torch


def schedule(n_items: int, n_prompts: int, seed: int) -> list[int]:
    """Item indices in training order: one seeded permutation per pass over the items, `n_prompts` long."""
    rng = np.random.default_rng(seed)
    order: list[int] = []
    while len(order) < n_prompts:
        order.extend(rng.permutation(n_items).tolist())
    return order[:n_prompts]


def set_peak_lr(optimizer: torch.optim.Optimizer, scheduler, peak: float) -> None:
    """Put `peak` as the schedule's peak learning rate, at the step the scheduler stands on (a LambdaLR, as
    transformers' linear schedule is; accelerate's wrapper is looked through), and on the optimizer's groups now."""
    inner = scheduler.scheduler if not isinstance(scheduler, torch.optim.lr_scheduler.LRScheduler) else scheduler
    if not isinstance(inner, torch.optim.lr_scheduler.LambdaLR):
        raise TypeError(f"an amended learning rate needs a LambdaLR schedule, not {type(inner).__name__}")
    inner.base_lrs = [peak for _ in inner.base_lrs]
    for group, factor in zip(optimizer.param_groups, inner.lr_lambdas, strict=True):
        group["initial_lr"] = peak
        group["lr"] = peak * factor(inner.last_epoch)
    # What get_last_lr() reports until the next step() (transformers logs the step's rate from it): torch keeps it in
    # `_last_lr`, set only by step().
    inner._last_lr = [group["lr"] for group in optimizer.param_groups]
