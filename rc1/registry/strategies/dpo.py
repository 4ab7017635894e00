"""Online DPO (Rafailov et al., 2023; Guo et al., 2024): per prompt the best- and worst-scored sampled reply
form a preference pair, and the DPO loss with β = `train.beta` runs against the reference."""

from __future__ import annotations

from rc1.registry.spec import StrategySpec, TorchRecipe, TrlRecipe, in_schedule_order, trainer_top_p

TRL_REPLIES = 2  # OnlineDPOTrainer samples two replies per prompt


def _trl_arguments(train, seed: int, vllm: bool) -> dict:
    # rc1's batch counts replies, as for GRPO; OnlineDPOTrainer's counts prompts, each sampled twice
    return dict(
        per_device_train_batch_size=train.per_device_batch_size // TRL_REPLIES,
        **in_schedule_order(seed),
        max_new_tokens=train.max_completion_tokens,
        max_length=train.max_prompt_tokens + train.max_completion_tokens,
        temperature=train.temperature,
        top_k=train.top_k,
        top_p=trainer_top_p(train, vllm),
        beta=[train.beta],
        loss_type="sigmoid",
        remove_unused_columns=False,  # keep `item_index` for the reward function
        gradient_checkpointing=train.gradient_checkpointing,
        # TRL 1.16's OnlineDPOTrainer turns the KV cache off in generation whenever gradient checkpointing is on
        # (online_dpo_trainer.py:562), which makes each rollout quadratic in its length; its generation runs with
        # checkpointing disabled anyway (trl/models/utils.py `_unwrap_model_for_generation`), so the cache is safe.
        # (rc1 never samples dpo through vLLM, whose SamplingParams have no such key: the recipe says vllm=False.)
        generation_kwargs=None if vllm else {"use_cache": True},
    )


def _beta_above_zero(config) -> list[str]:
    return ["train.beta: DPO's β must be above 0 (e.g. --set train.beta=0.1)"] if config.train.beta == 0 else []


def _trl_samples_pairs(config) -> list[str]:
    train = config.train
    if config.engine.name == "trl" and (
        train.num_generations != TRL_REPLIES or train.per_device_batch_size % TRL_REPLIES
    ):
        return [
            f"train.num_generations: TRL's OnlineDPOTrainer samples {TRL_REPLIES} replies per prompt, so trl×dpo "
            f"needs num_generations {TRL_REPLIES} and an even per_device_batch_size (--set "
            f"train.num_generations={TRL_REPLIES}), or engine.name torch (any group)"
        ]
    return []


SPEC = StrategySpec(
    name="dpo",
    about="online DPO with the better- and worse-scored sampled reply of a prompt as its pair, β = train.beta",
    trl=TrlRecipe(
        trainer="rc1.train.online_dpo:MeasuredOnlineDPOTrainer",
        arguments="rc1.train.online_dpo:OnlineDPOConfig",
        options=_trl_arguments,
        replies_per_prompt=TRL_REPLIES,
        probe="rc1.train.online_dpo:probe_for",
        about="TRL `OnlineDPOTrainer` (`trl.experimental`; `DPOTrainer` is offline): 2 sampled replies per "
        "prompt, the better-scored chosen; needs `train.num_generations: 2`; KL and ratio measured "
        "from the trainer's own log-probabilities (`rc1/train/online_dpo.py`)",
    ),
    torch=TorchRecipe(
        objective="rc1.train.strategies.dpo:DpoStrategy",
        about="online DPO: best- and worst-scored sample of each prompt as the pair, β = `train.beta`",
    ),
    rules=(_beta_above_zero, _trl_samples_pairs),
)
