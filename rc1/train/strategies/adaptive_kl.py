"""`train.target_kl` for GRPO: the KL coefficient β adapts so the measured KL to the reference stays near
the target (Schulman et al., 2017, §4): β doubles when KL > 1.5·target, halves when KL < target/1.5.
Without a target, β stays `train.beta`. β is part of the checkpoint, so a resumed run continues it."""

from __future__ import annotations


class AdaptiveKL:
    def __init__(self, beta: float, target: float | None):
        self.beta = beta
        self.target = target

    def update(self, kl: float) -> None:
        if self.target is None:
            return
        if kl > 1.5 * self.target:
            self.beta *= 2.0
        elif kl < self.target / 1.5:
            self.beta /= 2.0

    def state_dict(self) -> dict:
        return {"beta": self.beta}

    def load_state_dict(self, state: dict) -> None:
        self.beta = float(state["beta"])
