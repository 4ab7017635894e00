"""The contracts between the training stage, the engines and the strategies (DESIGN §3).

An engine owns the model, optimizer, scheduler, data order and RNGs, and runs the loop; a `Strategy`
owns the torch engine's objective: what one batch of prompts becomes (rollouts, rewards, advantages,
losses). The stage sees only `TrainingEngine` (train, evaluate) and `TrainingHooks`; which engine runs
which strategy is the registry's (rc1/registry/), and rc1/train/engines.py builds it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Literal, Protocol

import msgspec
import torch

from rc1.data.task import TaskItem
from rc1.train.metrics import EvalResult, Sampling, StepMetrics

# (items, completions, completion token counts) -> rewards: rc1.scoring.pipeline.make_reward_fn
RewardFn = Callable[..., list[float]]  # (items, completions, completion_tokens, context=None) -> rewards


class Verdict(msgspec.Struct, frozen=True, kw_only=True):
    """What the run's monitors decided at a step or a checkpoint (rc1/run/monitors/): `halt` (the run is HALTED until a
    person chooses the way forward) or `stop` (the line ends early as complete)."""

    action: Literal["halt", "stop"]
    rule: str
    step: int
    message: str


class TrainingEnded(Exception):
    """Raised by an engine on every rank once its hooks decided a Verdict: training ends at this step."""

    def __init__(self, verdict: Verdict):
        super().__init__(verdict.message)
        self.verdict = verdict


class TrainingHooks(Protocol):
    def on_step(self, metrics: StepMetrics) -> Verdict | None:
        """Once per optimizer step, in order; a Verdict ends training there."""

    def on_checkpoint(self, step: int, staged_dir: Path) -> Verdict | None:
        """`staged_dir` holds everything the next step needs; the stage publishes it (rename, hashes, event) and
        evaluates; a Verdict ends training there."""

    def close(self) -> None:
        """Training is over (done, or failed): the console progress ends."""


class NoHooks:
    """Hooks that record and evaluate nothing: a benchmark of the loop alone."""

    def on_step(self, metrics: StepMetrics) -> Verdict | None:
        return None

    def on_checkpoint(self, step: int, staged_dir: Path) -> Verdict | None:
        return None

    def close(self) -> None:
        pass


class TrainingEngine(Protocol):
    """What the training stage drives, whatever the engine."""

    truncated_prompts: int

    @property
    def model(self) -> torch.nn.Module: ...

    def train(self, hooks: TrainingHooks, resume_from: Path | None, amended: frozenset[str] = frozenset()) -> None:
        """Train to `train.max_steps`, from scratch or from a published checkpoint directory. `amended`: training
        keys (rc1/app/amend.py) whose config value replaces what the checkpoint holds (a rollback that changed
        them); every other value is the checkpoint's, so a resume stays exact."""

    def evaluate(
        self, items: list[TaskItem], max_new_tokens: int, sampling: Sampling | None = None, drift: int = 0
    ) -> EvalResult:
        """Replies of the current policy to `items`, greedy or sampled (`sampling`); leaves every RNG and the
        model's mode as found. With `drift` and `sampling`: the KL to the step-0 policy of that many replies per item
        (EvalResult.drift)."""

    def close(self) -> None:
        """Drop the policy, the optimizer and whatever holds them, so they are freed once the caller lets go of the
        engine (no reference cycle waits on the cyclic collector)."""


class StepProbe(Protocol):
    """What the trl engine's trainer does not log and a `train_step` carries, measured beside it (a strategy's
    TRL recipe names its probe: rc1/train/sft_probe.py, rc1/train/online_dpo.py)."""

    @property
    def measured(self) -> dict[str, float] | None:
        """The step's reward, reward_std, tokens, kl and ratio, read once when the step is logged."""

    def before_step(self, step: int, model) -> None:
        """Optimizer step `step` (1-based) is about to run on `model`."""

    def rewarded(self, rewards: list[float], lengths: list[int]) -> None:
        """rc1's reward function scored replies of the current step (their rewards and token counts)."""


class Strategy(Protocol):
    """The torch engine's objective over batches of prompts, attached to one engine; built from
    `config.train`. How many replies it samples per prompt is its spec's (rc1/registry/strategies/)."""

    def attach_engine(self, engine) -> None: ...

    def parameters(self) -> Iterator[torch.nn.Parameter]:
        """Trainable parameters of the strategy's own (a value head), optimized with the policy's."""

    def on_batch(self, items: list[TaskItem]) -> StepMetrics:
        """Turn one batch of prompts into one optimizer step; fields the engine fills (step, lr, memory,
        time) may be left at 0."""

    def state_dict(self) -> dict: ...

    def load_state_dict(self, state: dict) -> None: ...
