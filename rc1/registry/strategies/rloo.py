"""RLOO (Ahmadian et al., 2024), as TRL's RLOOTrainer computes it: each sample's reward less β times its
sequence KL to the reference, minus the mean of the other samples of its prompt (the leave-one-out baseline),
then the clipped surrogate. β adapts to `train.target_kl` as GRPO's does."""

from __future__ import annotations

from rc1.registry.spec import StrategySpec, TorchRecipe, TrlRecipe
from rc1.registry.strategies.grpo import group_arguments

SPEC = StrategySpec(
    name="rloo",
    about="reward less β·sequence KL, the mean of the prompt's other replies as baseline (leave-one-out)",
    trl=TrlRecipe(
        trainer="trl:RLOOTrainer",
        arguments="trl:RLOOConfig",
        options=group_arguments,
        vllm=True,
        masks_truncated=True,
        about="TRL `RLOOTrainer`",
    ),
    torch=TorchRecipe(
        objective="rc1.train.strategies.rloo:RlooStrategy",
        about="rc1's loop: reward − β·sequence KL, leave-one-out baseline, clipped surrogate",
    ),
    target_kl="adapts_beta",
)
