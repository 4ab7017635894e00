"""PPO (Schulman et al., 2017) as RLHF runs it: a value head, per-token KL reward, GAE, clipped policy and value
losses; `train.target_kl` stops a step's update passes. TRL 1.x has no PPOTrainer: the torch engine only."""

from __future__ import annotations

from rc1.registry.spec import StrategySpec, TorchRecipe

SPEC = StrategySpec(
    name="ppo",
    about="a value head, per-token KL reward, GAE, clipped policy and value losses",
    torch=TorchRecipe(
        objective="rc1.train.strategies.ppo:PpoStrategy",
        about="rc1's loop: value head, per-token KL reward, GAE (γ 1, λ 0.95), clipped policy and value losses",
    ),
    not_on={"trl": "TRL 1.x has no `PPOTrainer`"},
    target_kl="stops_passes",
)
