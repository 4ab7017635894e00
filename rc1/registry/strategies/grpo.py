"""GRPO (Shao et al., 2024): `train.num_generations` sampled replies per prompt, advantages normalised within
each prompt's group, β·KL to the reference; β adapts to `train.target_kl`. The default strategy."""

from __future__ import annotations

from rc1.registry.spec import StrategySpec, TorchRecipe, TrlRecipe, trainer_top_p
from rc1.registry.training_arguments import checkpointing


def group_arguments(train, seed: int, vllm: bool) -> dict:
    """GRPOConfig's arguments (and RLOOConfig's): groups of num_generations replies, β, the dataset unshuffled."""
    return dict(
        num_generations=train.num_generations,
        max_completion_length=train.max_completion_tokens,
        temperature=train.temperature,
        top_p=trainer_top_p(train, vllm),
        top_k=train.top_k,
        mask_truncated_completions=train.mask_truncated_completions,
        beta=train.beta,
        shuffle_dataset=False,
        remove_unused_columns=False,  # keep `item_index` for the reward function
        **checkpointing(train.gradient_checkpointing),
        **({"use_vllm": True, "vllm_mode": "colocate"} if vllm else {}),
    )


SPEC = StrategySpec(
    name="grpo",
    about="group-normalised advantages over each prompt's sampled replies, β·KL to the reference (the default)",
    trl=TrlRecipe(
        trainer="trl:GRPOTrainer",
        arguments="trl:GRPOConfig",
        options=group_arguments,
        vllm=True,
        masks_truncated=True,
        about="TRL `GRPOTrainer` (the default)",
    ),
    torch=TorchRecipe(
        objective="rc1.train.strategies.grpo:GrpoStrategy",
        about="rc1's loop: group-normalised advantages, clipped surrogate, β·KL to the reference",
    ),
    target_kl="adapts_beta",
)
