"""The training strategies `engine.strategy` may name: one module each, declaring its `SPEC`, collected here by
explicit imports (no package scanning). A new strategy is one module here plus its test; where it runs on the
torch engine, its objective lives in rc1/train/strategies/ and its spec names it."""

from __future__ import annotations

from rc1.registry.spec import StrategySpec
from rc1.registry.strategies import dpo, grpo, ppo, rloo, sft

STRATEGIES: dict[str, StrategySpec] = {spec.name: spec for spec in (grpo.SPEC, rloo.SPEC, ppo.SPEC, dpo.SPEC, sft.SPEC)}


def pairs() -> list[tuple[str, str]]:
    """Every (engine, strategy) pair an engine runs, sorted: what config accepts."""
    return sorted((engine, name) for name, spec in STRATEGIES.items() for engine in spec.engines)


def with_target_kl() -> list[str]:
    """The strategies train.target_kl acts on, sorted."""
    return sorted(name for name, spec in STRATEGIES.items() if spec.target_kl is not None)
