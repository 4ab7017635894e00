"""What a training strategy and an engine declare, and how the registry names the code that runs them.

A spec holds names, numbers, flags and rules only, so config validates against it without torch or trl. The
code that runs a strategy (a TRL trainer and its arguments class, the torch engine's objective) is named
"module:attr" and imported by `load` when an engine is built, by the engine (rc1/train), never here.

A rule reads a `rc1.config.Config` and returns its problems, each `dotted.key: what is wrong; how to fix
it` (the registry is below config and imports nothing of it; config calls the rules when it loads)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

Rule = Callable[[Any], list[str]]  # (config) -> problems


def load(reference: str):
    """The object `reference` ("package.module:attr") names. The layer that runs it calls this (an engine in
    rc1/train, the judge builder in rc1/scoring); the registry itself only holds the string."""
    module, _, attr = reference.partition(":")
    return getattr(importlib.import_module(module), attr)


@dataclass(frozen=True, kw_only=True)
class TrlRecipe:
    """How the trl engine (rc1/train/engine_trl.py) runs a strategy: one of TRL's trainers and its arguments."""

    trainer: str  # "module:attr" of the trainer class
    arguments: str  # "module:attr" of its arguments class
    # (train section, run seed, vllm) -> the strategy's own arguments; on top of the engine's (output dir, steps,
    # saving, logging, learning rate, batch, precision), which they may override.
    options: Callable[[Any, int, bool], dict]
    about: str  # one line: what runs (docs/tables.md, `rc1 ls strategies`)
    replies_per_prompt: int | None = None  # fixed by the trainer (it samples that many); None: the strategy's
    # "module:attr" of `(engine, model) -> probe`: measures each step's reward, KL and ratio where the trainer
    # logs none of its own (rc1/train/sft_probe.py, rc1/train/online_dpo.py)
    probe: str | None = None
    vllm: bool = False  # samples through vLLM (TRL's use_vllm, colocated) on CUDA where vllm is installed
    masks_truncated: bool = False  # takes TRL's mask_truncated_completions (train.mask_truncated_completions)


@dataclass(frozen=True, kw_only=True)
class TorchRecipe:
    """How the torch engine (rc1/train/engine_torch.py) runs a strategy: its objective, rc1's own code."""

    objective: str  # "module:attr" of the `Strategy` class (rc1/train/strategies/), built from config.train
    about: str


@dataclass(frozen=True, kw_only=True)
class StrategySpec:
    name: str
    about: str  # one line: what it optimizes (engine.strategy's help, docs/config.md, `rc1 ls strategies`)
    trl: TrlRecipe | None = None
    torch: TorchRecipe | None = None
    not_on: dict[str, str] | None = None  # engine -> why it cannot run this strategy (messages, docs/tables.md)
    # What it trains on: replies it samples and rc1's reward scores, or the items' gold replies (it sees no
    # reward, so nothing can be found failing: priority sampling is refused).
    trains_on: Literal["samples", "gold"] = "samples"
    replies_per_prompt: int | None = None  # sampled replies per prompt; None: train.num_generations
    uses_beta: bool = True  # train.beta is its coefficient (KL, or DPO's β); otherwise the step's kl_coef is 0
    # What train.target_kl does: β doubles/halves to keep the KL to the reference near it (so β must start above
    # 0), or the update passes stop once the policy leaves the sampler's trust region; None: refused.
    target_kl: Literal["adapts_beta", "stops_passes"] | None = None
    rules: tuple[Rule, ...] = ()  # its own constraints on a config that names it

    @property
    def engines(self) -> tuple[str, ...]:
        """The engines that run it (rc1/registry/engines.py)."""
        return tuple(name for name, recipe in (("trl", self.trl), ("torch", self.torch)) if recipe is not None)

    def replies(self, engine: str, num_generations: int) -> int:
        """Replies per prompt on `engine`: what an optimizer step's batch of replies is divided by."""
        fixed = self.trl.replies_per_prompt if engine == "trl" else None
        return fixed or self.replies_per_prompt or num_generations

    def target_kl_acts(self, beta: float) -> bool:
        """Whether a train.target_kl acts at this β (β adapts only from above 0)."""
        return self.target_kl == "stops_passes" or (self.target_kl == "adapts_beta" and beta > 0)


@dataclass(frozen=True, kw_only=True)
class EngineSpec:
    name: str
    about: str  # one line: what runs the loop (engine.name's help, docs/config.md)
    # "module:attr" of the engine class: (config, items, reward_fn, model, tokenizer, staging, device, make_sampler)
    engine: str
    multi_process: bool  # trains under torchrun / accelerate (rank 0 writes)
    rules: tuple[Rule, ...] = ()


def in_schedule_order(seed: int) -> dict:
    """TrainingArguments that keep a dataset in its order: the trl engine's dataset is the seeded schedule
    already, and a trainer must not reorder it (for trainers that sample through transformers' own sampler)."""
    return dict(data_seed=seed, train_sampling_strategy="sequential")


def trainer_top_p(train, vllm: bool) -> float:
    """The top_p a TRL trainer is given: vLLM samples with train.top_p itself; where transformers samples, the trainer
    gets 1.0 and rc1 makes the cut, deterministic on CUDA (rc1/train/trainer_rollouts.py `around_trainer_generate`)."""
    return train.top_p if vllm else 1.0
