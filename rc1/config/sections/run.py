"""The sections of what is trained and by whom: `run` (its name and seeds), `model` (the base model and its
LoRA adapter), `finetune` (which weights change) and `engine` (the engine and strategy, whose help is read
from their specs in rc1/registry/)."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from rc1.config.sections.base import NonNegativeInt, PositiveInt, Section, spoken, strategies_where
from rc1.registry.engines import ENGINES
from rc1.registry.strategies import STRATEGIES

# engine.name's and engine.strategy's help, from the specs (rc1/registry/): what each engine is and runs, and what
# each strategy optimizes on which engines.
_ENGINES_HELP = "; ".join(
    f"{name}: {spec.about}, running {spoken(strategies_where(lambda s, name=name: name in s.engines))}"
    for name, spec in ENGINES.items()
)
_STRATEGIES_HELP = "; ".join(f"{name} ({', '.join(spec.engines)}): {spec.about}" for name, spec in STRATEGIES.items())


class RunConfig(Section):
    """The run's name and seeds."""

    name: Annotated[
        str,
        Meta(
            pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$",
            description="The run's name: its log events/<name>.jsonl, data/<name>/ and checkpoints/<name>/. Letters, "
            "digits, `_`, `.` and `-`, at most 64 characters.",
        ),
    ]
    seed: Annotated[
        NonNegativeInt,
        Meta(
            description="Seeds the data (the seed pool, its rebalancing, fresh items), the built-in base model built "
            "from "
            "it and the shadow run's sampler; a new seed is a new pool and a new base model."
        ),
    ] = 1234
    seeds: Annotated[
        list[NonNegativeInt],
        Meta(
            description="The training seeds: one line of training per seed on the same gated inputs, one after another "
            "(adapter initialisation, data order, sampling); with several, each line checkpoints in "
            "checkpoints/<run>/seed_<s>/ and the verdict is taken across seeds."
        ),
    ] = msgspec.field(default_factory=lambda: [1234])


class LoraConfig(Section):
    """The LoRA adapter trained with finetune.method lora or qlora (peft)."""

    r: Annotated[PositiveInt, Meta(description="The adapter's rank.")] = 8
    alpha: Annotated[PositiveInt, Meta(description="LoRA's scaling: updates are scaled by alpha / r.")] = 16
    dropout: Annotated[float, Meta(ge=0.0, lt=1.0, description="Dropout on the adapter's input, in [0, 1).")] = 0.05
    target_modules: Annotated[
        list[str],
        Meta(
            description="Names of the modules that get an adapter; by default every attention and MLP projection of a "
            "Qwen3 block."
        ),
    ] = msgspec.field(
        default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
    )


class ModelConfig(Section):
    """The policy's base model and how it is loaded (rc1/train/model_loading.py)."""

    name: Annotated[
        str,
        Meta(
            description="An HF hub id, a local directory, or a built-in model: builtin:reader (a small "
            "Qwen3-architecture model shipped in the repo, trained to copy from its context and to read generated "
            "episodes: rc1/reader/) "
            "or builtin:tiny-qwen3 (the same size, randomly initialised, its tokenizer trained on the pool)."
        ),
    ]
    dtype: Annotated[
        Literal["auto", "fp32", "bf16", "fp16"],
        Meta(
            description="The weights' dtype. auto: bf16 on CUDA (fp16 where the GPU has no bf16), fp16 on MPS, fp32 on "
            "CPU; half precision on the CPU is refused."
        ),
    ] = "auto"
    attn_implementation: Annotated[
        Literal["sdpa", "eager"],
        Meta(description="transformers' attention implementation (attn_implementation of from_pretrained)."),
    ] = "sdpa"
    thinking: Annotated[
        Literal["auto", "on", "off"] | bool,
        Meta(
            description="Whether completions start inside a <think> block the chat template opened (Qwen3-*-Thinking): "
            "the visible reply is then the text after the last </think>. auto reads it off the chat template "
            "when the policy's tokenizer is loaded, where an explicit on/off the template contradicts is "
            "refused. YAML 1.1 reads a bare on/off as a boolean, so true/false mean on/off "
            "(rc1/scoring/thinking.py)."
        ),
    ] = "auto"
    warm_start_steps: Annotated[
        NonNegativeInt,
        Meta(
            description="Built-in model only: SFT steps on gold replies of the training pool before RL, cached beside "
            "the model (rc1/train/warm_start.py); 0: none."
        ),
    ] = 0
    lora: LoraConfig = msgspec.field(default_factory=LoraConfig)

    @property
    def thinking_mode(self) -> str:
        """`thinking` as auto, on or off."""
        if isinstance(self.thinking, bool):
            return "on" if self.thinking else "off"
        return self.thinking


class FinetuneConfig(Section):
    """Which weights training changes."""

    method: Annotated[
        Literal["lora", "qlora", "full"],
        Meta(
            description="lora: a LoRA adapter on the frozen base (model.lora); qlora: the same on a 4-bit base (CUDA "
            "and a hub model; the production profile's, the adapter kept in fp32; no vLLM rollouts); full: every "
            "weight of the model, no adapter (trl engine only, not in fp16; the reference policy is a second copy). "
            "Production takes lora or qlora."
        ),
    ] = "lora"


class EngineConfig(Section):
    """Who runs the training loop and what it optimizes; the engines, the strategies and which pairs run are the
    registry's (rc1/registry/)."""

    name: Annotated[
        Literal[tuple(ENGINES)],
        Meta(description=f"{_ENGINES_HELP}."),
    ] = "trl"
    strategy: Annotated[
        Literal[tuple(STRATEGIES)],
        Meta(
            description=f"One of {', '.join(STRATEGIES)}, each declared in rc1/registry/strategies/<name>.py with the "
            f"engines that run it: {_STRATEGIES_HELP}."
        ),
    ] = "grpo"
