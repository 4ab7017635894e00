"""The contracts between the training stage, the engines and the strategies (DESIGN §3).

An engine owns the model, optimizer, scheduler, data order and RNGs, and runs the loop; a `Strategy`
owns the torch engine's objective: what one batch of prompts becomes (rollouts, rewards, advantages,
losses). The stage sees only `TrainingEngine` (train, evaluate) and `TrainingHooks`; which engine runs
which strategy is one table, rc1.train.pairs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Protocol

import torch

from rc1.data.task import TaskItem
from rc1.train.metrics import EvalResult, Sampling, StepMetrics

# (items, completions, completion token counts) -> rewards: rc1.scoring.pipeline.make_reward_fn
RewardFn = Callable[[list[TaskItem], list[str], list[int]], list[float]]


class TrainingHooks(Protocol):
    def on_step(self, metrics: StepMetrics) -> None:
        """Once per optimizer step, in order."""

    def on_checkpoint(self, step: int, staged_dir: Path) -> None:
        """`staged_dir` holds everything the next step needs; the stage publishes it (rename, hashes, event)."""


class NoHooks:
    """Hooks that record nothing: a non-zero rank of a multi-process launch (rank 0 logs and publishes), a
    benchmark of the loop alone."""

    def on_step(self, metrics: StepMetrics) -> None:
        pass

    def on_checkpoint(self, step: int, staged_dir: Path) -> None:
        pass


class TrainingEngine(Protocol):
    """What the training stage drives, whatever the engine."""

    truncated_prompts: int

    @property
    def model(self) -> torch.nn.Module: ...

    def train(self, hooks: TrainingHooks, resume_from: Path | None) -> None:
        """Train to `train.max_steps`, from scratch or from a published checkpoint directory."""

    def evaluate(self, items: list[TaskItem], max_new_tokens: int, sampling: Sampling | None = None) -> EvalResult:
        """Replies of the current policy to `items`, greedy or sampled (`sampling`); leaves every RNG and the
        model's mode as found."""


class Strategy(Protocol):
    """An objective over batches of prompts, attached to one engine."""

    name: str
    completions_per_prompt: int

    def attach_engine(self, engine) -> None: ...

    def parameters(self) -> Iterator[torch.nn.Parameter]:
        """Trainable parameters of the strategy's own (a value head), optimized with the policy's."""

    def on_batch(self, items: list[TaskItem]) -> StepMetrics:
        """Turn one batch of prompts into one optimizer step; fields the engine fills (step, lr, memory,
        time) may be left at 0."""

    def state_dict(self) -> dict: ...

    def load_state_dict(self, state: dict) -> None: ...
