"""The `train` section (the optimizer loop of each line of training, its sampling, checkpoints and evaluations)
and `priority_sampling` (which items each step draws). Where a key's help names the strategies a setting acts
on, the names come from their specs (rc1/registry/strategies/)."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from rc1.config.sections.base import (
    NonNegativeFloat,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
    Probability,
    Section,
    spoken,
    strategies_where,
)
from rc1.core.catalog import DIFFICULTY_MIX, Difficulty
from rc1.registry.strategies import STRATEGIES

# The strategies a key's help names, from their specs (rc1/registry/strategies/), in the registry's order.
_ON_GOLD = spoken(strategies_where(lambda s: s.trains_on == "gold"))  # sft
_THROUGH_VLLM = ", ".join(strategies_where(lambda s: s.trl is not None and s.trl.vllm))  # grpo, rloo
_MASKING = spoken(strategies_where(lambda s: s.trl is not None and s.trl.masks_truncated))  # grpo and rloo
_STOPS_PASSES = spoken(strategies_where(lambda s: s.target_kl == "stops_passes"))  # ppo
_ADAPTS_BETA = spoken(strategies_where(lambda s: s.target_kl == "adapts_beta"))  # grpo and rloo
_FIXED_GROUPS = "; ".join(  # trl×dpo: 2
    f"trl×{name}: {spec.trl.replies_per_prompt}"
    for name, spec in STRATEGIES.items()
    if spec.trl is not None and spec.trl.replies_per_prompt
)


class TrainConfig(Section):
    """The optimizer loop of each line of training (one per run.seeds entry), its checkpoints and evaluations."""

    max_steps: Annotated[PositiveInt, Meta(description="Optimizer steps of each line of training.")]
    save_steps: Annotated[
        PositiveInt, Meta(description="A checkpoint every this many optimizer steps (at most max_steps).")
    ]
    eval_steps: Annotated[
        PositiveInt | None,
        Meta(
            description="Shadow-set evaluation at every checkpoint whose step is a multiple of this (and at step 0 and "
            "at the end); absent: at every checkpoint. A multiple of save_steps: best/ is promoted from "
            "checkpoints."
        ),
    ] = None
    log_steps: Annotated[
        PositiveInt | None,
        Meta(
            description="A console line (step, loss, KL, reward, tokens/s, ETA) every this many optimizer steps; "
            "absent: max_steps / 100, so a run prints about 100 lines. Every step is in the log and "
            "logs/train.log whatever this says."
        ),
    ] = None
    learning_rate: Annotated[
        PositiveFloat,
        Meta(
            description="The optimizer's (AdamW) peak learning rate; linear warmup, then linear decay to 0 at "
            "max_steps."
        ),
    ] = 1.0e-5
    warmup_steps: Annotated[NonNegativeInt, Meta(description="Steps of linear learning-rate warmup from 0.")] = 0
    per_device_batch_size: Annotated[
        PositiveInt,
        Meta(
            description=f"Completions per device and micro-batch: prompts × num_generations ({_ON_GOLD}: gold replies)."
        ),
    ] = 4
    gradient_accumulation_steps: Annotated[
        PositiveInt,
        Meta(
            description="Micro-batches per optimizer step; a step trains on per_device_batch_size × this × processes "
            "completions (with step_batch: fixed, per_device_batch_size × this on any number of "
            "processes)."
        ),
    ] = 1
    step_batch: Annotated[
        Literal["scales", "fixed"],
        Meta(
            description="What a multi-process launch does to a step's batch. scales: every process adds "
            "per_device_batch_size × gradient_accumulation_steps completions (N GPUs do N times the work per "
            "step). fixed: a step trains on per_device_batch_size × gradient_accumulation_steps completions "
            "on any number of processes, the accumulation divided among them (it must divide evenly, else "
            "exit 2): N GPUs finish the same steps sooner, and the run's numbers keep their meaning."
        ),
    ] = "scales"
    rollouts: Annotated[
        Literal["auto", "transformers", "vllm", "vllm_server"],
        Meta(
            description="Who samples the training rollouts. auto: vLLM colocated on each training GPU (TRL's use_vllm, "
            "vllm_mode colocate) where the trl engine's strategy samples through it "
            f"({_THROUGH_VLLM}), vllm is "
            "installed and the device is CUDA; transformers' generate otherwise. transformers: always "
            "generate. vllm: colocated, exit 2 where it cannot be. vllm_server: TRL's server mode, a `trl "
            "vllm-serve --model <the base>` on GPUs of its own at vllm_server_url (exit 2 where it cannot "
            "be). Evaluations generate with transformers on every rank whichever is chosen."
        ),
    ] = "auto"
    vllm_server_url: Annotated[
        str, Meta(description="Where `trl vllm-serve` listens when rollouts: vllm_server (TRL's vllm_server_base_url).")
    ] = "http://localhost:8000"
    num_generations: Annotated[
        int,
        Meta(
            ge=2,
            description="Sampled replies per prompt, the group GRPO and RLOO compare within; it divides the "
            f"step's batch ({_FIXED_GROUPS}).",
        ),
    ] = 4
    max_prompt_tokens: Annotated[
        PositiveInt,
        Meta(
            description="Prompt length in tokens: a longer prompt loses its earliest turns (training says how many "
            "were "
            "cut)."
        ),
    ] = 512
    max_completion_tokens: Annotated[
        PositiveInt,
        Meta(
            description="Most tokens of a reply, in training and evaluation; a reply whose thinking is still open then "
            "has no answer."
        ),
    ] = 256
    temperature: Annotated[
        PositiveFloat,
        Meta(
            description="Sampling temperature of training rollouts and of the sampled evaluation replies (shadow and "
            "gate sets, round 2's shadow run)."
        ),
    ] = 1.0
    top_p: Annotated[
        float,
        Meta(
            gt=0.0,
            le=1.0,
            description="Nucleus sampling of training rollouts and sampled evaluations: only the most likely tokens "
            "whose probabilities sum to this are drawn from (TRL's top_p; where transformers samples, rc1 makes the "
            "cut itself, deterministic on CUDA: rc1/train/nucleus.py). 1.0: no cut.",
        ),
    ] = 1.0
    top_k: Annotated[
        NonNegativeInt,
        Meta(
            description="Only the k most likely tokens are drawn from, in training rollouts and sampled evaluations "
            "(TRL's top_k). 0: no cut."
        ),
    ] = 0
    mask_truncated_completions: Annotated[
        bool,
        Meta(
            description="A reply cut at max_completion_tokens is left out of the loss (TRL's "
            "mask_truncated_completions, DAPO's overlong filtering): its advantage, negative whenever a group-mate "
            f"answered, would teach the policy to think less. The trl engine's {_MASKING}."
        ),
    ] = False
    vllm_gpu_memory_utilization: Annotated[
        float,
        Meta(
            gt=0.0,
            le=1.0,
            description="rollouts through colocated vLLM: the share of each GPU vLLM reserves for its copy of the "
            "weights and its KV cache (TRL's vllm_gpu_memory_utilization, default 0.3); vLLM's context is "
            "max_prompt_tokens + max_completion_tokens.",
        ),
    ] = 0.3
    deterministic: Annotated[
        bool,
        Meta(
            description="On CUDA, train with deterministic kernels (torch.use_deterministic_algorithms, strictly; "
            "cuDNN's deterministic choice; cuBLAS's fixed workspace), so a resumed line re-trains bit-identical steps "
            "(the attention backends keep their deterministic backward); training_started records whether this "
            "line's resume is exact. Slower (not measured: make gpu-check times it). On the CPU training is "
            "deterministic either way."
        ),
    ] = True
    beta: Annotated[
        NonNegativeFloat,
        Meta(
            description="β, the KL coefficient against the reference policy (dpo: DPO's β, above 0). 0: no KL term, "
            "and "
            "TRL's GRPO and RLOO build no reference (kl is recorded as 0)."
        ),
    ] = 0.04
    target_kl: Annotated[
        PositiveFloat | None,
        Meta(
            description=f"RL strategies only: for {_STOPS_PASSES} a step's update passes stop once the policy's KL "
            f"to its sampler passes 1.5×target; for {_ADAPTS_BETA} β doubles/halves to keep the KL to the reference "
            "near it (so β must start above 0). Absent: β fixed, all passes. Production: in [0.02, 0.05] where it "
            "acts."
        ),
    ] = None
    update_epochs: Annotated[
        PositiveInt,
        Meta(description="Passes over each batch (the torch engine's grpo, rloo and ppo; the trl engine makes one)."),
    ] = 1
    max_grad_norm: Annotated[
        PositiveFloat, Meta(description="Gradient clipping: the largest global L2 norm of a step's gradient.")
    ] = 1.0
    gradient_checkpointing: Annotated[
        bool,
        Meta(
            description="Recompute activations in the backward pass (memory for 4B models; only slows a tiny one "
            "down). "
            "On, the model's KV cache is off for training forwards (use_cache: false), as transformers "
            "needs."
        ),
    ] = False
    simulate: Annotated[
        bool,
        Meta(description="Declares the run a simulation; the production profile's training_config check refuses true."),
    ] = False
    live_mode: Annotated[
        bool,
        Meta(
            description="Declares that scores are made live; the production profile's training_config check requires "
            "true."
        ),
    ] = True


class PrioritySamplingConfig(Section):
    """Which items each optimizer step trains on (rc1/train/sampler.py); absent: seeded passes over the
    balanced pool, every item once per pass."""

    by_difficulty: Annotated[
        dict[Difficulty, NonNegativeFloat],
        Meta(description="Weights of the balanced pool's difficulty buckets when a batch slot is drawn."),
    ] = msgspec.field(default_factory=lambda: dict(DIFFICULTY_MIX))
    low_perf_cap: Annotated[
        Probability,
        Meta(
            description="Items the policy currently fails (no reply reached half the reward when last seen) get "
            "priority, up to this share of a batch."
        ),
    ] = 0.0
    seed_ratio_schedule: Annotated[
        list[tuple[NonNegativeInt, Probability]],
        Meta(
            description="[[from_step, seed_share], ...]: from that step on, this share of a batch comes from the seed "
            "pool (the balanced pool) and the rest are fresh items from the task sources, leak-checked "
            "against the shadow and gate sets. Steps ascending from 0."
        ),
    ] = msgspec.field(default_factory=lambda: [(0, 1.0)])
