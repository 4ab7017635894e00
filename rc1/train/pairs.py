"""Which engine runs which strategy: the one table (README "Engines and strategies").

| engine | grpo | rloo | ppo | dpo | sft |
|--------|------|------|-----|-----|-----|
| trl    | TRL GRPOTrainer | TRL RLOOTrainer | — (TRL 1.x has no PPOTrainer) | TRL OnlineDPOTrainer | TRL SFTTrainer |
| torch  | rc1's loop | rc1's loop | rc1's loop, value head, GAE | online DPO | SFT on gold replies |

`rc1.config_rules.ENGINE_STRATEGIES` names the same pairs, so a config asking for another is refused (exit 2)
before anything is loaded; a test keeps the two equal.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rc1.config import Config
from rc1.data.task import TaskItem
from rc1.train.protocols import RewardFn, TrainingEngine
from rc1.train.sampler import PassSampler, Sampler


def _trl(config, items, reward_fn, model, tokenizer, staging_dir, device, make_sampler):
    from rc1.train.engine_trl import TrlEngine

    return TrlEngine(config, items, reward_fn, model, tokenizer, staging_dir, device, make_sampler)


def _torch(strategy_name: str):
    def build(config, items, reward_fn, model, tokenizer, staging_dir, device, make_sampler):
        from rc1.train.engine_torch import TorchEngine
        from rc1.train.strategies.dpo import DpoStrategy
        from rc1.train.strategies.grpo import GrpoStrategy
        from rc1.train.strategies.ppo import PpoStrategy
        from rc1.train.strategies.rloo import RlooStrategy
        from rc1.train.strategies.sft import SftStrategy

        strategy = {"grpo": GrpoStrategy, "rloo": RlooStrategy, "ppo": PpoStrategy, "dpo": DpoStrategy, "sft": SftStrategy}[strategy_name]
        return TorchEngine(config, items, reward_fn, model, tokenizer, staging_dir, device, strategy(config.train),
                           make_sampler)

    return build


PAIRS = {
    ("trl", "grpo"): _trl,
    ("trl", "rloo"): _trl,
    ("trl", "dpo"): _trl,
    ("trl", "sft"): _trl,
    ("torch", "grpo"): _torch("grpo"),
    ("torch", "rloo"): _torch("rloo"),
    ("torch", "ppo"): _torch("ppo"),
    ("torch", "dpo"): _torch("dpo"),
    ("torch", "sft"): _torch("sft"),
}


def build_engine(config: Config, items: list[TaskItem], reward_fn: RewardFn, model, tokenizer, staging_dir: Path,
                 device: str, make_sampler: Callable[[int], Sampler] | None = None) -> TrainingEngine:
    """The engine for `config.engine` (validated against the table when the config was loaded); batches come
    from `make_sampler(prompts per step)`, by default seeded passes over `items`."""
    if make_sampler is None:
        make_sampler = lambda per_step: PassSampler(items, per_step, config.train.max_steps, config.run.seed)  # noqa: E731
    return PAIRS[(config.engine.name, config.engine.strategy)](config, items, reward_fn, model, tokenizer, staging_dir,
                                                               device, make_sampler)
