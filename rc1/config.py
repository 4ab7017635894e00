"""Typed run configuration: YAML file + `--set` overrides -> validated `Config`.

Every error names the file and the dotted key, and says how to fix it. Type errors
come from msgspec (first one found); cross-field rules (rc1/config_rules.py) are
collected and reported together.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Annotated, Literal

import msgspec
import yaml

from rc1.catalog import DIFFICULTY_MIX, PRODUCTION_MIX, Difficulty, TaskName
from rc1.config_rules import cross_field_problems
from rc1.errors import BadInput
from rc1.registry.engines import ENGINES
from rc1.registry.providers import PROVIDERS
from rc1.registry.strategies import STRATEGIES


Probability = Annotated[float, msgspec.Meta(ge=0.0, le=1.0)]
PositiveInt = Annotated[int, msgspec.Meta(ge=1)]
NonNegativeInt = Annotated[int, msgspec.Meta(ge=0)]
NonNegativeFloat = Annotated[float, msgspec.Meta(ge=0.0)]
PositiveFloat = Annotated[float, msgspec.Meta(gt=0.0)]


class _Section(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    pass


class RunConfig(_Section):
    name: Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")]
    seed: NonNegativeInt = 1234
    seeds: list[NonNegativeInt] = msgspec.field(default_factory=lambda: [1234])


class SourceConfig(_Section):
    """One task's records: an official-format file (paths relative to the config file's folder), or a
    dataset of the HF hub (or a local dataset folder) loaded through `datasets`. Give `path` or `hub`."""

    path: str | None = None  # the pool's records
    shadow_path: str | None = None  # held-out records for the shadow set; built-in generator when absent
    hub: str | None = None  # e.g. openai/gsm8k, hotpotqa/hotpot_qa
    subset: str | None = None  # the hub dataset's config, e.g. main, distractor
    split: str = "train"  # the hub split of the pool's records
    shadow_split: str | None = None  # the hub split of the shadow set's records, e.g. test, validation


class DataConfig(_Section):
    pool_size: PositiveInt
    shadow_size: PositiveInt
    shadow_seed: NonNegativeInt = 4242
    mix: dict[TaskName, Probability] = msgspec.field(
        default_factory=lambda: dict(PRODUCTION_MIX)
    )
    sources: dict[TaskName, SourceConfig] = msgspec.field(default_factory=dict)
    # Episodes (template pack): see rc1/data/episodes.py.
    templates: str = "templates/pack_v2"  # the pack folder, relative to the config file's folder
    max_turns: Annotated[int, msgspec.Meta(ge=1, le=8)] = 3
    max_tool_hops: Annotated[int, msgspec.Meta(ge=0, le=8)] = 2
    clarify_rate: Annotated[float, msgspec.Meta(ge=0.0, le=0.5)] = 0.10
    tools: list[Literal["wiki", "calc"]] = msgspec.field(default_factory=lambda: ["wiki", "calc"])
    # Difficulty: the balanced pool's bucket shares within every task.
    difficulty_target: dict[Difficulty, Probability] = msgspec.field(
        default_factory=lambda: dict(DIFFICULTY_MIX)
    )


class PreflightConfig(_Section):
    """Thresholds of the preflight checks. The production profile cannot loosen them below the floors in
    `rc1.checks.consistency.PRODUCTION_FLOORS`."""

    min_distinct2: Probability = 0.60
    max_duplicate_rate: Probability = 0.02
    near_duplicate_similarity: Probability = 0.85
    min_len_tokens: PositiveInt = 64
    max_len_tokens: PositiveInt = 4096
    leak_ngram: PositiveInt = 5
    leak_similarity: Probability = 0.85
    mix_tolerance: Probability = 0.03
    min_free_disk_gb: NonNegativeFloat = 50.0
    min_ngram_kl: NonNegativeFloat = 0.15
    min_roles: PositiveInt = 4
    min_styles: PositiveInt = 3
    min_hard_share: Probability = 0.30
    max_easy_share: Probability = 0.30
    hard_clue_overlap_max: Probability = 0.20
    easy_clue_overlap_min: Probability = 0.40
    min_balanced_fraction: Probability = 0.50  # the balanced pool keeps at least this share of the seed pool
    min_accelerator_memory_gb: NonNegativeFloat = 0.0  # checked only when an accelerator is present
    # Share of the last 100 judge calls answered from the cache: above it, scores are not being made live.
    max_cache_hit_rate_round1: Probability = 0.90
    max_cache_hit_rate_round2: Probability = 0.95


class LoraConfig(_Section):
    r: PositiveInt = 8
    alpha: PositiveInt = 16
    dropout: Annotated[float, msgspec.Meta(ge=0.0, lt=1.0)] = 0.05
    target_modules: list[str] = msgspec.field(
        default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
    )


class ModelConfig(_Section):
    # An HF hub id, a local directory, or `builtin:tiny-qwen3` (built offline from the pool).
    name: str
    dtype: Literal["auto", "fp32", "bf16", "fp16"] = "auto"
    attn_implementation: Literal["sdpa", "eager"] = "sdpa"
    # Whether completions start inside a `<think>` block the chat template opened (Qwen3-*-Thinking):
    # auto reads it off the chat template when the policy's tokenizer is loaded. See rc1/scoring/thinking.py.
    # YAML 1.1 reads a bare on/off as a boolean, so true/false are accepted for on/off.
    thinking: Literal["auto", "on", "off"] | bool = "auto"
    # Built-in model only: SFT steps on gold replies of the training pool before RL (rc1/train/warm_start.py).
    warm_start_steps: NonNegativeInt = 0
    lora: LoraConfig = msgspec.field(default_factory=LoraConfig)

    @property
    def thinking_mode(self) -> str:
        """`thinking` as auto, on or off."""
        if isinstance(self.thinking, bool):
            return "on" if self.thinking else "off"
        return self.thinking


class FinetuneConfig(_Section):
    # lora: a LoRA adapter on the frozen base (model.lora); qlora: the same on a 4-bit base (CUDA, the
    # production requirement); full: every weight of the model is trained, no adapter (trl engine only).
    method: Literal["lora", "qlora", "full"] = "lora"


class EngineConfig(_Section):
    # The names the registry declares (rc1/registry/): its engines, its strategies; which pairs run, it says too.
    name: Literal[tuple(ENGINES)] = "trl"
    strategy: Literal[tuple(STRATEGIES)] = "grpo"


class TrainConfig(_Section):
    max_steps: PositiveInt
    save_steps: PositiveInt
    # Shadow-set evaluation at every checkpoint whose step is a multiple of this (and at the end, and at
    # step 0); absent: at every checkpoint. A multiple of save_steps: best/ is promoted from checkpoints.
    eval_steps: PositiveInt | None = None
    learning_rate: PositiveFloat = 1.0e-5
    warmup_steps: NonNegativeInt = 0
    per_device_batch_size: PositiveInt = 4
    gradient_accumulation_steps: PositiveInt = 1
    num_generations: Annotated[int, msgspec.Meta(ge=2)] = 4
    max_prompt_tokens: PositiveInt = 512
    max_completion_tokens: PositiveInt = 256
    temperature: PositiveFloat = 1.0
    beta: NonNegativeFloat = 0.04  # KL coefficient against the reference policy
    # RL strategies only: PPO stops a step's update passes once the policy's KL to its sampler passes
    # 1.5×target; GRPO doubles/halves β to keep the KL to the reference near it. Absent: β fixed, all passes.
    target_kl: PositiveFloat | None = None
    # Passes over each batch (the torch engine's grpo and ppo; trl's GRPOTrainer makes one).
    update_epochs: PositiveInt = 1
    max_grad_norm: PositiveFloat = 1.0
    # Recompute activations in the backward pass (memory for 4B models; only slows a tiny one down). On,
    # the model's KV cache is switched off for training forwards (`use_cache: false`), as transformers needs.
    gradient_checkpointing: bool = False
    simulate: bool = False
    live_mode: bool = True


class RewardConfig(_Section):
    weights: str = "weights.json"  # relative to the config file's folder
    # DAPO soft overlong penalty: the last `overlong_cache_fraction` of train.max_completion_tokens is
    # the soft zone where the `length` component falls from 1 to 0 (TRL's get_soft_overlong_punishment).
    overlong_cache_fraction: Annotated[float, msgspec.Meta(gt=0.0, le=1.0)] = 0.25
    use_overclar_penalty: bool = True
    overclar_alpha: NonNegativeFloat = 0.07
    overclar_cap: NonNegativeInt = 3
    difficulty_beta: NonNegativeFloat = 0.0
    # What correctness and f1 are computed against during training: each item's own gold answer, or (a control
    # arm, `make bench`) the gold of another item of the same task, a fixed seeded derangement. Evaluations
    # always score against the item's own gold. The production profile refuses `shuffled`.
    answers: Literal["gold", "shuffled"] = "gold"


ScorerProvider = Literal[tuple(PROVIDERS)]  # rc1/registry/providers.py: none, openai_compat, hf_judge, openai, …


class ScorerConfig(_Section):
    """The judge scored beside the always-computed rule components (see rc1/scoring/)."""

    provider: ScorerProvider = "none"  # openai, gemini, deepseek_r1: presets of openai_compat
    base_url: str = ""  # openai_compat (required) and the presets (optional: their default otherwise)
    model: str = ""  # the judge model: required for hf_judge; presets have a default; openai_compat asks /models
    rubric: str = "judge/rubric.md"  # relative to the config file's folder
    timeout_s: PositiveFloat = 60.0
    max_retries: NonNegativeInt = 3  # after the first try, on 429, 5xx, timeouts and malformed answers
    backoff_s: NonNegativeFloat = 1.0  # the first retry's wait; doubled each retry (a Retry-After header wins)
    max_concurrency: PositiveInt = 8  # judge calls in flight at once
    cache: bool = False  # answer a repeated (provider, model, rubric, prompt, reply) from data/scorer_cache


class ShadowConfig(_Section):
    """The shadow run (`rc1 shadow run`; round 2 runs it on the base model as `pre_run_check`)."""

    samples: Annotated[int, msgspec.Meta(ge=2)] = 4  # sampled replies per shadow item
    # The old scoring: this weights file (relative to the config's folder) without the penalty and the
    # difficulty factor; absent: the run's weights without them.
    old_weights: str | None = None
    unstable_variance: NonNegativeFloat = 0.08  # items whose new score varies more across samples are left out


ReleaseMetric = Literal["hard_success", "hard_sampled_success", "success", "sampled_success", "mean_reward"]


class ReleaseConfig(_Section):
    """The RC1 release gate: on the gate set (held out, used for nothing else), did success of the checkpoint the
    shadow set chose beat the step-0 policy's by the threshold, with a paired 95 % interval above 0?"""

    # Percentage points of gate-set success (sampled, averaged per item), selected checkpoint minus step 0.
    min_hard_gain_pp: float = 5.0
    # Items of the gate set: hard items of `tasks`, drawn from their own stream in round 1, evaluated once on
    # the step-0 policy (round 2) and once on the selected checkpoint of each line of training.
    gate_size: PositiveInt = 400
    # Sampled replies per gate item (and per shadow item at each evaluation), at train.temperature.
    samples: PositiveInt = 8
    # The tasks of the release question (their hard items form the gate set and the shadow's hard_success).
    tasks: list[TaskName] = msgspec.field(default_factory=lambda: ["hotpotqa", "strategyqa"])
    # What best/ is promoted on, measured on the shadow set: hard_success (greedy) or hard_sampled_success on
    # the hard items of `tasks`; success, sampled_success or mean_reward over the whole shadow set.
    metric: ReleaseMetric = "hard_success"


class PrioritySamplingConfig(_Section):
    """Which items each optimizer step trains on (rc1/train/sampler.py); absent: seeded passes over the
    balanced pool, every item once per pass."""

    # Weights of the balanced pool's difficulty buckets when a batch slot is drawn.
    by_difficulty: dict[Difficulty, NonNegativeFloat] = msgspec.field(
        default_factory=lambda: dict(DIFFICULTY_MIX)
    )
    # Items the policy currently fails (no reply reached half the reward when last seen) get priority,
    # up to this share of a batch.
    low_perf_cap: Probability = 0.0
    # [[from_step, seed_share], ...]: from that step on, this share of a batch comes from the seed pool
    # (the balanced pool) and the rest are fresh items from the task sources, leak-checked against the
    # shadow set. Steps ascending from 0.
    seed_ratio_schedule: list[tuple[NonNegativeInt, Probability]] = msgspec.field(default_factory=lambda: [(0, 1.0)])


class Config(_Section):
    profile: Literal["local", "production"]
    run: RunConfig
    data: DataConfig
    model: ModelConfig
    train: TrainConfig
    preflight: PreflightConfig = msgspec.field(default_factory=PreflightConfig)
    finetune: FinetuneConfig = msgspec.field(default_factory=FinetuneConfig)
    engine: EngineConfig = msgspec.field(default_factory=EngineConfig)
    reward: RewardConfig = msgspec.field(default_factory=RewardConfig)
    scorer: ScorerConfig = msgspec.field(default_factory=ScorerConfig)
    release: ReleaseConfig = msgspec.field(default_factory=ReleaseConfig)
    shadow: ShadowConfig = msgspec.field(default_factory=ShadowConfig)
    priority_sampling: PrioritySamplingConfig | None = None


class LoadedConfig(msgspec.Struct, frozen=True, kw_only=True):
    """A validated config plus where it came from; `sha256` fingerprints the effective values."""

    config: Config
    path: Path
    overrides: tuple[str, ...]
    sha256: str

    @property
    def weights_path(self) -> Path:
        return self.resolve(self.config.reward.weights)

    @property
    def rubric_path(self) -> Path:
        return self.resolve(self.config.scorer.rubric)

    @property
    def templates_path(self) -> Path:
        return self.resolve(self.config.data.templates)

    def resolve(self, relative: str) -> Path:
        """A path named in the config, relative to the config file's folder."""
        return (self.path.parent / relative).resolve()


def load_config(path: str | Path, overrides: list[str] | tuple[str, ...] = ()) -> LoadedConfig:
    path = Path(path)
    raw = _read_yaml(path)
    for item in overrides:
        _apply_override(raw, item, path)
    config = _convert(raw, path)
    problems = cross_field_problems(config)
    if problems:
        raise BadInput("\n".join(f"{path}: {p}" for p in problems))
    return LoadedConfig(config=config, path=path.resolve(), overrides=tuple(overrides), sha256=config_sha256(config))


def config_sha256(config: Config) -> str:
    return hashlib.sha256(msgspec.json.encode(config)).hexdigest()


def effective_yaml(loaded: LoadedConfig) -> str:
    header = f"# effective config from {loaded.path}"
    if loaded.overrides:
        header += " with --set " + " --set ".join(loaded.overrides)
    header += f"\n# sha256 {loaded.sha256}\n"
    return header + yaml.safe_dump(msgspec.to_builtins(loaded.config), sort_keys=False)


def _read_yaml(path: Path) -> dict:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BadInput(f"{path}: config file not found") from None
    except OSError as e:
        raise BadInput(f"{path}: cannot read config: {e.strerror}") from None
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark else ""
        problem = getattr(e, "problem", None) or str(e)
        raise BadInput(f"{path}{where}: malformed YAML: {problem}") from None
    if not isinstance(raw, dict):
        raise BadInput(f"{path}: the top level must be a mapping of sections, got {type(raw).__name__}")
    return raw


def _apply_override(raw: dict, item: str, path: Path) -> None:
    key, sep, text = item.partition("=")
    if not sep or not key:
        raise BadInput(f"--set {item!r}: expected dotted.key=value")
    parts = key.split(".")
    node = raw
    for depth, part in enumerate(parts[:-1]):
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise BadInput(f"--set {key}: {'.'.join(parts[: depth + 1])} is not a section")
        node = child
    node[parts[-1]] = _parse_scalar(text)


def _parse_scalar(text: str):
    try:
        value = yaml.safe_load(text) if text else ""
    except yaml.YAMLError:
        return text
    if isinstance(value, str):
        # YAML 1.1 reads `5e-4` as a string; a user typing it on the command line means a number.
        try:
            return float(value)
        except ValueError:
            return value
    return value


_PATH_IN_MESSAGE = re.compile(r" - at `\$\.?([^`]*)`$")


def _convert(raw: dict, path: Path) -> Config:
    try:
        return msgspec.convert(raw, Config, strict=True)
    except msgspec.ValidationError as e:
        raise BadInput(f"{path}: {_dotted_message(str(e))}") from None


def _dotted_message(message: str) -> str:
    """msgspec's "Expected `int`, got `str` - at `$.train.max_steps`" -> "train.max_steps: Expected …"."""
    match = _PATH_IN_MESSAGE.search(message)
    dotted = ""
    detail = message
    if match:
        dotted = re.sub(r"\[(\d+)\]", r".\1", match.group(1))
        detail = message[: match.start()]
    unknown = re.match(r"Object contains unknown field `([^`]*)`", detail)
    if unknown:
        dotted = f"{dotted}.{unknown.group(1)}" if dotted else unknown.group(1)
        detail = "unknown key (check the spelling; unknown keys are refused)"
    return f"{dotted or '<top level>'}: {detail}"
