"""SFT on the items' gold replies (`Answer: <gold>`, or the clarification question): the warm start's objective
as a strategy. It sees no reward and has no KL term; each step's reward, KL and ratio are measured beside it."""

from __future__ import annotations

from rc1.registry.spec import StrategySpec, TorchRecipe, TrlRecipe, in_schedule_order
from rc1.registry.training_arguments import checkpointing


def _trl_arguments(train, seed: int, vllm: bool) -> dict:
    return dict(
        **in_schedule_order(seed),
        completion_only_loss=True,
        max_length=None,
        **checkpointing(train.gradient_checkpointing),
    )


SPEC = StrategySpec(
    name="sft",
    about="cross-entropy on the items' gold replies (it sees no reward)",
    trl=TrlRecipe(
        trainer="trl:SFTTrainer",
        arguments="trl:SFTConfig",
        options=_trl_arguments,
        probe="rc1.train.sft_probe:probe_for",
        about="TRL `SFTTrainer` on gold replies; reward, KL and ratio measured before each step by "
        "`rc1/train/sft_probe.py`",
    ),
    torch=TorchRecipe(
        objective="rc1.train.strategies.sft:SftStrategy",
        about="cross-entropy on the gold replies (the warm start's objective)",
    ),
    trains_on="gold",
    replies_per_prompt=1,
    uses_beta=False,
)
