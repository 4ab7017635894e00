"""The data order every engine trains in: seeded, pass after pass over the items."""

from __future__ import annotations

import numpy as np


def schedule(n_items: int, n_prompts: int, seed: int) -> list[int]:
    """Item indices in training order: one seeded permutation per pass over the items, `n_prompts` long."""
    rng = np.random.default_rng(seed)
    order: list[int] = []
    while len(order) < n_prompts:
        order.extend(rng.permutation(n_items).tolist())
    return order[:n_prompts]
