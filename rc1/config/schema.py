"""The run config's schema: one msgspec Struct per section, each key with its type, bounds and default, and the
help `rc1 config explain` prints. Reading a file into it is rc1/config/loading.py."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from rc1.core.catalog import DIFFICULTY_MIX, PRODUCTION_MIX, Difficulty, DifficultySignal, Profile, TaskName
from rc1.registry.engines import ENGINES
from rc1.registry.providers import PROVIDERS
from rc1.registry.strategies import STRATEGIES
from rc1.run.monitors.sections import MonitorsConfig

Probability = Annotated[float, msgspec.Meta(ge=0.0, le=1.0)]
PositiveInt = Annotated[int, msgspec.Meta(ge=1)]
NonNegativeInt = Annotated[int, msgspec.Meta(ge=0)]
NonNegativeFloat = Annotated[float, msgspec.Meta(ge=0.0)]
PositiveFloat = Annotated[float, msgspec.Meta(gt=0.0)]


class _Section(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    pass


class RunConfig(_Section):
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


class SourceConfig(_Section):
    """One task's records: an official-format file (paths relative to the config file's folder), or a
    dataset of the HF hub (or a local dataset folder) loaded through `datasets`. Give `path` or `hub`."""

    path: Annotated[
        str | None,
        Meta(
            description="The pool's records: an official-format file (GSM8K JSON Lines, HotpotQA or StrategyQA JSON "
            "array), relative to the config file's folder."
        ),
    ] = None
    shadow_path: Annotated[
        str | None,
        Meta(
            description="Held-out records of a file source for the shadow and gate sets; absent: those items of this "
            "task come from the built-in generator."
        ),
    ] = None
    hub: Annotated[
        str | None,
        Meta(
            description="A dataset of the HF hub (e.g. openai/gsm8k, hotpotqa/hotpot_qa) or a local dataset folder, "
            "loaded with datasets.load_dataset."
        ),
    ] = None
    subset: Annotated[str | None, Meta(description="The hub dataset's config, e.g. main, distractor.")] = None
    split: Annotated[str, Meta(description="The hub split of the pool's records.")] = "train"
    shadow_split: Annotated[
        str | None,
        Meta(
            description="The hub split of the shadow and gate sets' records, e.g. test, validation; absent: those "
            "items "
            "of this task come from the built-in generator."
        ),
    ] = None


class TaskConfig(_Section):
    """A task of yours (`data.tasks.<name>`): question/answer records of a local file (JSON Lines, JSON, CSV or
    Parquet, through `datasets.load_dataset`) or a hub dataset. Its share stands in `data.mix` beside the built-in
    tasks'; its items go through every round-1 check and into the shadow and gate sets like theirs."""

    path: Annotated[
        str | None,
        Meta(
            description="A local file of records (.jsonl, .json, .csv, .parquet), relative to the config file's "
            "folder; "
            "or give `hub`."
        ),
    ] = None
    hub: Annotated[
        str | None,
        Meta(description="A dataset of the HF hub (or a local dataset folder), loaded with datasets.load_dataset."),
    ] = None
    subset: Annotated[str | None, Meta(description="The hub dataset's config.")] = None
    split: Annotated[str, Meta(description="The split of the records (a local file has the one split train).")] = (
        "train"
    )
    question: Annotated[str, Meta(description="The column holding the question.")] = "question"
    answer: Annotated[
        str, Meta(description="The column holding the gold answer (numbers and booleans are read as text: 42, yes/no).")
    ] = "answer"
    context: Annotated[
        str | None, Meta(description="The column holding supporting text shown with the question; absent: none.")
    ] = None
    check: Annotated[
        str,
        Meta(
            description="How a reply's final answer is checked against the gold one: math (math-verify), exact (after "
            "SQuAD's normalization), yes_no, f1 (exact for correctness, token F1 for f1), or the name of one "
            "of reward.functions (its answer, clipped to [0, 1], is correctness and f1)."
        ),
    ] = "exact"
    held_out_share: Annotated[
        float,
        Meta(
            gt=0.0,
            lt=1.0,
            description="The share of the records kept for the shadow and gate sets, never in the pool: a record is "
            "held "
            "out when its normalized question hashes below this share (the same split on every run).",
        ),
    ] = 0.2
    difficulty: Annotated[
        DifficultySignal,
        Meta(
            description="Where the records' easy/medium/hard comes from: declared (the `difficulty_column` of each "
            "record), measured (the base model's success over `probe_samples` sampled replies per record: always "
            "solved is easy, never solved is hard), heuristic (the text metrics of the record; turns and tool hops, "
            "which a record has none of, are skipped), or auto: declared when the records have the column, else "
            "measured when the model can measure them (a configured model, the records within `probe_items`), else "
            "heuristic. Round 1's difficulty check says which one each task used."
        ),
    ] = "auto"
    difficulty_column: Annotated[
        str, Meta(description="The column declaring each record's difficulty: easy, medium or hard.")
    ] = "difficulty"
    probe_samples: Annotated[
        int, Meta(ge=2, le=64, description="Sampled replies per record when the difficulty is measured.")
    ] = 4
    probe_items: Annotated[
        PositiveInt,
        Meta(
            description="The most records a measured difficulty probes (a seeded sample when the task has more; only "
            "probed records are drawn): records × probe_samples replies of the base model in round 1."
        ),
    ] = 1024
    min_distinct2: Annotated[
        Probability | None,
        Meta(
            description="This task's own distinct-2 floor in place of preflight.min_distinct2 (templated records vary "
            "less than prose); the distinct2 check names the floor that binds."
        ),
    ] = None


class DataConfig(_Section):
    """What round 1 materializes: the seed pool, the balanced pool, the shadow set and the gate set; their tasks,
    sources and episode framing (the template pack, rc1/data/episodes.py)."""

    pool_size: Annotated[
        PositiveInt,
        Meta(
            description="Items of the seed pool (data/<run>/pool.jsonl), before difficulty balancing. The production "
            "profile needs at least 30,000."
        ),
    ]
    shadow_size: Annotated[
        PositiveInt,
        Meta(
            description="Items of the held-out shadow set, stratified by task × difficulty: evaluated at step 0, at "
            "every "
            "evaluation and at the end, it chooses best/. Smaller than pool_size; production: at least 245."
        ),
    ]
    shadow_seed: Annotated[
        NonNegativeInt,
        Meta(
            description="Seeds the shadow and gate sets' draws and the evaluations' sampler, so the same weights give "
            "the same numbers."
        ),
    ] = 4242
    mix: Annotated[
        dict[str, Probability],
        Meta(
            description="Task shares of the seed pool, the shadow set, the gate set's tasks and fresh items, over the "
            "built-in tasks (gsm8k, hotpotqa, strategyqa) and yours (data.tasks); they sum to 1. The "
            "production profile holds them to hotpotqa 0.45, strategyqa 0.30, gsm8k 0.25."
        ),
    ] = msgspec.field(default_factory=lambda: dict(PRODUCTION_MIX))
    tasks: Annotated[
        dict[str, TaskConfig],
        Meta(
            description="Your tasks, by name (data.tasks.<name>): records, their columns and how answers are "
            "checked. Give each a share in data.mix."
        ),
    ] = msgspec.field(default_factory=dict)
    sources: Annotated[
        dict[TaskName, SourceConfig],
        Meta(
            description="Per task, records of an official-format file or a hub dataset in place of the built-in "
            "generator (data.sources.<task>.path | hub, …); a task not named here is generated."
        ),
    ] = msgspec.field(default_factory=dict)
    templates: Annotated[
        str,
        Meta(
            description="The template pack's folder (roles, styles, user-turn templates), relative to the config "
            "file's folder."
        ),
    ] = "templates/pack_v2"
    max_turns: Annotated[
        int, Meta(ge=1, le=8, description="Most user turns in one episode; harder items get earlier turns.")
    ] = 3
    max_tool_hops: Annotated[
        int, Meta(ge=0, le=8, description="Most tool steps (calls of data.tools) in one episode.")
    ] = 2
    clarify_rate: Annotated[
        float,
        Meta(
            ge=0.0,
            le=0.5,
            description="Exact share (up to rounding) of under-specified prompts, whose right reply "
            "is one clarification question (needs_clarification: true).",
        ),
    ] = 0.10
    tools: Annotated[list[Literal["wiki", "calc"]], Meta(description="The tools an episode's tool steps may call.")] = (
        msgspec.field(default_factory=lambda: ["wiki", "calc"])
    )
    difficulty_target: Annotated[
        dict[Difficulty, Probability],
        Meta(
            description="The balanced pool's bucket shares within every task (easy, medium, hard, summing to 1); "
            "training draws from the balanced pool."
        ),
    ] = msgspec.field(default_factory=lambda: dict(DIFFICULTY_MIX))


class PreflightConfig(_Section):
    """Thresholds of the preflight checks. The production profile cannot loosen them below the floors in
    `rc1.app.checks.PRODUCTION_FLOORS`."""

    min_distinct2: Annotated[
        Probability,
        Meta(
            description="distinct2 check: distinct ÷ all word bigrams of the task text (context + question) must "
            "reach this."
        ),
    ] = 0.60
    max_duplicate_rate: Annotated[
        Probability,
        Meta(
            description="duplicates check: the largest share of exact (normalized) plus near duplicates, overall and "
            "in every task."
        ),
    ] = 0.02
    near_duplicate_similarity: Annotated[
        Probability,
        Meta(
            description="duplicates check: the word Jaccard similarity (MinHash-LSH, confirmed exactly) from which two "
            "items are near duplicates."
        ),
    ] = 0.85
    min_len_tokens: Annotated[
        PositiveInt, Meta(description="length_bounds check: the fewest prompt tokens an item may have.")
    ] = 64
    max_len_tokens: Annotated[
        PositiveInt, Meta(description="length_bounds check: the most prompt tokens an item may have.")
    ] = 4096
    leak_ngram: Annotated[
        PositiveInt,
        Meta(
            description="leak and gate_set checks: n of the word n-grams whose containment compares pool items with "
            "held-out ones."
        ),
    ] = 5
    leak_similarity: Annotated[
        Probability,
        Meta(
            description="leak and gate_set checks: the n-gram containment from which a pool item leaks a shadow or "
            "gate item (an equal question always does)."
        ),
    ] = 0.85
    mix_tolerance: Annotated[
        Probability,
        Meta(
            description="task_mix check: the largest difference between a task's share of the seed pool and data.mix "
            "(0.03: ±3 pp)."
        ),
    ] = 0.03
    min_free_disk_gb: Annotated[
        NonNegativeFloat, Meta(description="free_disk check: GB free on the filesystem the run writes to.")
    ] = 50.0
    min_ngram_kl: Annotated[
        NonNegativeFloat,
        Meta(
            description="ngram_kl check: how much the episode framings (template, role, style) change the prompts' "
            "word 3-grams, a chance-corrected KL in nats, per task and overall (docs/gates.md)."
        ),
    ] = 0.15
    min_roles: Annotated[
        PositiveInt,
        Meta(description="framing_coverage check: the fewest distinct roles of the template pack per task."),
    ] = 4
    min_styles: Annotated[
        PositiveInt,
        Meta(description="framing_coverage check: the fewest distinct styles of the template pack per task."),
    ] = 3
    min_hard_share: Annotated[
        Probability,
        Meta(description="difficulty check: the smallest share of hard items in the balanced pool, in every task."),
    ] = 0.30
    max_easy_share: Annotated[
        Probability,
        Meta(description="difficulty check: the largest share of easy items in the balanced pool, in every task."),
    ] = 0.30
    hard_clue_overlap_max: Annotated[
        Probability,
        Meta(
            description="difficulty check: the hard items' median clue_overlap (word 3-gram Jaccard of the "
            "best-matching "
            "question and context sentences) is at most this."
        ),
    ] = 0.20
    easy_clue_overlap_min: Annotated[
        Probability, Meta(description="difficulty check: the easy items' median clue_overlap is at least this.")
    ] = 0.40
    min_balanced_fraction: Annotated[
        Probability, Meta(description="difficulty check: the balanced pool keeps at least this share of the seed pool.")
    ] = 0.50
    min_accelerator_memory_gb: Annotated[
        NonNegativeFloat,
        Meta(
            description="accelerator_memory check: free GPU memory in GB, checked only when an accelerator is present; "
            "the one threshold the production profile leaves to the machine."
        ),
    ] = 0.0
    max_cache_hit_rate_round1: Annotated[
        Probability,
        Meta(
            description="scorer_cache check in round 1: the share of the last 100 judge calls answered from the cache "
            "stays below this; above it, scores are not being made live."
        ),
    ] = 0.90
    max_cache_hit_rate_round2: Annotated[
        Probability, Meta(description="scorer_cache check in round 2: as max_cache_hit_rate_round1.")
    ] = 0.95
    max_cut_share: Annotated[
        Probability,
        Meta(
            description="thinking_fits check (round 2): the share of the base model's sampled shadow replies cut at "
            "train.max_completion_tokens may not exceed this. A cut reply (thinking still open) has no answer, scores "
            "0 and, kept in the loss, teaches the policy to think less."
        ),
    ] = 0.10
    max_no_signal_share: Annotated[
        Probability,
        Meta(
            description="thinking_fits check (round 2): the share of shadow items whose sampled replies all succeed "
            "or all fail (a group with no spread has no advantage: it trains nothing) may not exceed this; each "
            "task's and difficulty's share is recorded beside it."
        ),
    ] = 0.95


class LoraConfig(_Section):
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


class ModelConfig(_Section):
    """The policy's base model and how it is loaded (rc1/train/model_loading.py)."""

    name: Annotated[
        str,
        Meta(
            description="An HF hub id, a local directory, or builtin:tiny-qwen3 (a small Qwen3-architecture model with "
            "a "
            "tokenizer trained on the pool, built offline)."
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


class FinetuneConfig(_Section):
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


class EngineConfig(_Section):
    """Who runs the training loop and what it optimizes; the engines, the strategies and which pairs run are the
    registry's (rc1/registry/)."""

    name: Annotated[
        Literal[tuple(ENGINES)],
        Meta(
            description="trl: TRL's trainers (the production path); torch: rc1's own loop (adapters only; PPO with a "
            "value head lives there)."
        ),
    ] = "trl"
    strategy: Annotated[
        Literal[tuple(STRATEGIES)],
        Meta(
            description=f"One of {', '.join(STRATEGIES)}, each declared in rc1/registry/strategies/<name>.py with the "
            "engines that run it: grpo, rloo, ppo (torch engine), dpo (online: the better- and worse-scored "
            "sampled reply of a prompt), sft (cross-entropy on the gold replies)."
        ),
    ] = "grpo"


class TrainConfig(_Section):
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
        Meta(description="Completions per device and micro-batch: prompts × num_generations (sft: gold replies)."),
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
            "vllm_mode colocate) where the trl engine's strategy samples through it (grpo, rloo), vllm is "
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
            "step's batch (trl×dpo: 2).",
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
            "whose probabilities sum to this are drawn from (TRL's top_p). 1.0: no cut.",
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
            "answered, would teach the policy to think less. The trl engine's grpo and rloo."
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
            "line's resume is exact. Slower (not measured: make gpu-check times it). A top_p below 1 is refused with "
            "it (CUDA's cumsum). On the CPU training is deterministic either way."
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
            description="RL strategies only: PPO stops a step's update passes once the policy's KL to its sampler "
            "passes 1.5×target; GRPO and RLOO double/halve β to keep the KL to the reference near it (so β "
            "must start above 0). Absent: β fixed, all passes. Production: in [0.02, 0.05] where it "
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


class RewardFunctionConfig(_Section, kw_only=True):
    """One reward component of yours (rc1/scoring/functions.py): a function with TRL's reward-function signature
    (`path`, or a factory of one with `kwargs`), or a sequence-classification reward model (`model`), each answer in
    [-1, 1] after `scale` and `clip`."""

    name: Annotated[
        str,
        Meta(
            pattern=r"^[a-z][a-z0-9_]*$",
            description="The component's name: in the weights file, `rc1 score`, the rollout archive and train_step's "
            "component means. Not a built-in component's (correctness, f1, format, length, judge).",
        ),
    ]
    path: Annotated[
        str | None,
        Meta(
            description="package.module:function (TRL's own: trl.rewards:think_format_reward), imported with the "
            "config file's folder first on the import path; an async def is awaited. Its source's sha256 is part of "
            "the config's fingerprint. Give path or model."
        ),
    ] = None
    weight: Annotated[
        float,
        Meta(
            ge=0.0,
            le=0.5,
            description="Its weight, which also stands in the weights file under `name` (the weights check holds the "
            "two equal).",
        ),
    ]
    kwargs: Annotated[
        dict[str, bool | int | float | str | None] | None,
        Meta(
            description="With path: path names a factory, called once with these arguments to make the function "
            "(trl.rewards:get_soft_overlong_punishment with {max_completion_len: 256, soft_punish_cache: 64}); "
            "part of the fingerprint."
        ),
    ] = None
    model: Annotated[
        str | None,
        Meta(
            description="A sequence-classification reward model instead of path: a local directory or a hub id, as "
            "TRL's reward_funcs takes one; scored in batches on the policy's device, its logit the answer. The "
            "sha256 of its weights is part of the fingerprint."
        ),
    ] = None
    format: Annotated[
        Literal["conversational", "text"],
        Meta(
            description="What prompts and completions are: conversational (TRL's format for a chat policy, as rc1's "
            "are: prompts as message lists, each completion [{role: assistant, content}]) or text (strings: the "
            "prompt as rendered, the completion)."
        ),
    ] = "conversational"
    scale: Annotated[
        PositiveFloat,
        Meta(
            description="Each answer is divided by this before the [-1, 1] check (a function answering in [0, 10]: 10)."
        ),
    ] = 1.0
    clip: Annotated[
        bool,
        Meta(
            description="Clip answers (after scale) into [-1, 1]; false: an answer outside it fails the batch, named "
            "(never silently)."
        ),
    ] = False
    constant_ok: Annotated[
        bool,
        Meta(
            description="Round 2's component_spread fails the round when this component gives every reply of the base "
            "model's shadow run the same score (dead weight: no advantage sees it); true notes it instead, for one "
            "that only varies once the policy has learned (a length penalty near the limit, a LaTeX answer)."
        ),
    ] = False


class RewardConfig(_Section):
    """The training reward: (Σ w_k·component_k − α·min(c, cap)) × (1 + β·(hard − easy)), c the questions the
    visible reply asks."""

    weights: Annotated[
        str,
        Meta(
            description="The components' weights (JSON), relative to the config file's folder: non-negative, none "
            "above "
            "0.5, summing to 1 (weights check)."
        ),
    ] = "weights.json"
    overlong_cache_fraction: Annotated[
        float,
        Meta(
            gt=0.0,
            le=1.0,
            description="DAPO soft overlong penalty: the last fraction of train.max_completion_tokens is the soft zone "
            "where the length component falls from 1 to 0 (TRL's get_soft_overlong_punishment).",
        ),
    ] = 0.25
    use_overclar_penalty: Annotated[
        bool,
        Meta(
            description="Subtract the over-clarification penalty α·min(c, cap) (0 for an item that needs "
            "clarification). Production: true."
        ),
    ] = True
    overclar_alpha: Annotated[
        NonNegativeFloat, Meta(description="α: the penalty per question the visible reply asks. Production: 0.07.")
    ] = 0.07
    overclar_cap: Annotated[NonNegativeInt, Meta(description="cap: the most questions penalized. Production: 3.")] = 3
    difficulty_beta: Annotated[
        NonNegativeFloat,
        Meta(
            description="β of the difficulty factor 1 + β·(hard − easy): a hard item's reward × (1 + β), an easy one's "
            "× (1 − β). 0: no factor."
        ),
    ] = 0.0
    answers: Annotated[
        Literal["gold", "shuffled"],
        Meta(
            description="What correctness and f1 are computed against during training: each item's own gold answer, "
            "or (a control arm, make bench) the gold of another item of the same task, a fixed seeded "
            "derangement. Evaluations always score against the item's own gold; production refuses "
            "shuffled."
        ),
    ] = "gold"
    functions: Annotated[
        list[RewardFunctionConfig],
        Meta(
            description="Your reward functions, each a component beside the rule ones (and the judge), called with "
            "TRL's reward-function signature; round 1 probes each (reward_functions check)."
        ),
    ] = msgspec.field(default_factory=list)
    columns: Annotated[
        dict[str, str],
        Meta(
            description="Extra names for the items' columns, passed to every reward function as TRL passes dataset "
            "columns: {solution: answer} gives trl.rewards:accuracy_reward the gold answer. The columns: id, task, "
            "question, context, answer, difficulty, needs_clarification."
        ),
    ] = msgspec.field(default_factory=dict)
    function_timeout_s: Annotated[
        PositiveFloat,
        Meta(
            description="Seconds an async reward function may take over one batch (all of them run concurrently on "
            "one event loop); past it the batch fails, named."
        ),
    ] = 60.0


ScorerProvider = Literal[tuple(PROVIDERS)]  # rc1/registry/providers.py: none, openai_compat, hf_judge, openai, …


class ScorerConfig(_Section):
    """The judge scored beside the always-computed rule components (see rc1/scoring/)."""

    provider: Annotated[
        ScorerProvider,
        Meta(
            description="none: rule components only; openai_compat: a live judge over the OpenAI-compatible API; "
            "openai, gemini, deepseek_r1: presets of it; hf_judge: a local transformers model. API judges "
            "read their key from SCORER_API_KEY."
        ),
    ] = "none"
    base_url: Annotated[
        str,
        Meta(
            description="The API's URL: required by openai_compat, optional for the presets (their default otherwise)."
        ),
    ] = ""
    model: Annotated[
        str,
        Meta(description="The judge model: required for hf_judge; presets have a default; openai_compat asks /models."),
    ] = ""
    rubric: Annotated[str, Meta(description="The judge's system message, relative to the config file's folder.")] = (
        "judge/rubric.md"
    )
    timeout_s: Annotated[PositiveFloat, Meta(description="Seconds per judge request.")] = 60.0
    max_retries: Annotated[
        NonNegativeInt,
        Meta(
            description="Retries after the first try, on 429, 5xx, timeouts and malformed answers; then the command "
            "fails (exit 1)."
        ),
    ] = 3
    backoff_s: Annotated[
        NonNegativeFloat,
        Meta(description="The first retry's wait in seconds, doubled each retry (a Retry-After header wins)."),
    ] = 1.0
    max_concurrency: Annotated[PositiveInt, Meta(description="Judge calls in flight at once.")] = 8
    cache: Annotated[
        bool,
        Meta(
            description="Answer a repeated (provider, model, rubric, prompt, reply) from data/scorer_cache/; probes "
            "bypass it."
        ),
    ] = False
    price_per_million_input_tokens: Annotated[
        NonNegativeFloat | None,
        Meta(
            description="USD per million prompt tokens of the judge: the judge's cost in every event's scoring "
            "summary, "
            "`rc1 status` (spend) and monitors.budget; absent: cost not counted."
        ),
    ] = None
    price_per_million_output_tokens: Annotated[
        NonNegativeFloat | None,
        Meta(description="USD per million completion tokens of the judge (as price_per_million_input_tokens)."),
    ] = None


class ShadowConfig(_Section):
    """The shadow run (`rc1 shadow run`; round 2 runs it on the base model as `pre_run_check`)."""

    samples: Annotated[int, Meta(ge=2, description="Sampled replies per shadow item.")] = 4
    old_weights: Annotated[
        str | None,
        Meta(
            description="The old scoring: this weights file (relative to the config's folder) without the penalty and "
            "the difficulty factor; absent: the run's weights without them."
        ),
    ] = None
    unstable_variance: Annotated[
        NonNegativeFloat,
        Meta(
            description="Items whose new score varies more than this across samples are listed as unstable and left "
            "out."
        ),
    ] = 0.08


ReleaseMetric = Literal["hard_success", "hard_sampled_success", "success", "sampled_success", "mean_reward"]


class ReleaseConfig(_Section):
    """The RC1 release gate: on the gate set (held out, used for nothing else), did success of the checkpoint the
    shadow set chose beat the step-0 policy's by the threshold, with a paired 95 % interval above 0?"""

    min_hard_gain_pp: Annotated[
        float,
        Meta(
            description="The threshold, in percentage points of gate-set success (sampled, averaged per item): "
            "selected checkpoint minus step 0."
        ),
    ] = 5.0
    gate_size: Annotated[
        PositiveInt,
        Meta(
            description="Items of the gate set: hard items of `tasks`, drawn from their own stream in round 1, "
            "evaluated once on the step-0 policy (round 2) and once on the selected checkpoint of each line "
            "of training."
        ),
    ] = 400
    samples: Annotated[
        PositiveInt,
        Meta(
            description="Sampled replies per gate item (and per shadow item at each evaluation), at train.temperature."
        ),
    ] = 8
    tasks: Annotated[
        list[str],
        Meta(
            description="The tasks of the release question: their hard items form the gate set and the shadow set's "
            "hard_success."
        ),
    ] = msgspec.field(default_factory=lambda: ["hotpotqa", "strategyqa"])
    metric: Annotated[
        ReleaseMetric,
        Meta(
            description="What best/ is promoted on, measured on the shadow set: hard_success (greedy) or "
            "hard_sampled_success on the hard items of `tasks`; success, sampled_success or mean_reward over "
            "the whole shadow set."
        ),
    ] = "hard_success"


class PrioritySamplingConfig(_Section):
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


class RolloutsConfig(_Section):
    """The rollout archive (rc1/scoring/archive.py): every sampled completion of training and of evaluation, with
    each reward component, the penalty, the difficulty factor and the reward; `rc1 rollouts` shows it and
    `rc1 audit --rescore` scores it again."""

    keep_text: Annotated[
        Literal["all", "every_n_steps", "none"],
        Meta(
            description="Whose completion text the archive keeps: all; training's every `every_n_steps` steps only "
            "(evaluations' always); or none. The scores of every completion are kept in every case."
        ),
    ] = "all"
    every_n_steps: Annotated[
        PositiveInt,
        Meta(description="With keep_text: every_n_steps, the training steps whose texts are kept: multiples of this."),
    ] = 100


class TrackingConfig(_Section):
    """Experiment trackers, fed from the run's events (rc1/views/trackers.py): each step sent once, across a kill and
    a resume; a tracker that fails warns in logs/train.log and never stops training."""

    report_to: Annotated[
        list[Literal["tensorboard", "mlflow", "wandb", "trackio"]],
        Meta(
            description="The trackers to send the run to: tensorboard (event files under tracking/<run>/tensorboard/, "
            "`tensorboard --logdir tracking`); mlflow (the `mlflow` extra; the server MLFLOW_TRACKING_URI "
            "names, experiment rc1); wandb (the `wandb` extra; project WANDB_PROJECT or rc1, WANDB_MODE "
            "offline keeps it on this machine); trackio (the `trackio` extra; project TRACKIO_PROJECT or "
            "rc1, stored where TRACKIO_DIR says). Empty: none."
        ),
    ] = msgspec.field(default_factory=list)


class Config(_Section):
    """An rc1 run: the YAML file given by --config, with --set overrides."""

    profile: Annotated[
        Profile,
        Meta(
            description="Which limits the training_config check holds the run to: production (the production floors, "
            "a live API judge, qlora, ≥ 3 seeds, ≥ 50,000 steps, …), smoke (the production path checked before "
            "committing to it: production's floors, judge and adapter, at most 2,000 steps; its verdict is computed "
            "and labelled not a release) or local (the embedded default's smaller ones)."
        ),
    ]
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
    rollouts: RolloutsConfig = msgspec.field(default_factory=RolloutsConfig)
    tracking: TrackingConfig = msgspec.field(default_factory=TrackingConfig)
    monitors: MonitorsConfig = msgspec.field(default_factory=MonitorsConfig)
