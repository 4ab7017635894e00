"""Rules that span fields of a config, checked when it is loaded; each problem reads
`dotted.key: what is wrong; how to fix it`, and all of them are reported together.

The structs are in rc1/config/sections/ (assembled into `Config` by rc1/config/schema.py); rc1/config/loading.py
imports this module, which reads a `Config` (or one of its sections) and imports nothing else of rc1/config/, not
even for type hints, so they make no circle. What a strategy, an engine, a scorer provider or a tracker allows is the
registry's (rc1/registry/): its flags and its rules.
"""

from __future__ import annotations

import re

from rc1.core.catalog import BUILTIN_MODELS, DIFFICULTIES, is_builtin
from rc1.registry.engines import ENGINES
from rc1.registry.providers import PROVIDERS
from rc1.registry.strategies import STRATEGIES, pairs, with_target_kl
from rc1.registry.trackers import TRACKERS


def cross_field_problems(config) -> list[str]:
    """Rules that span fields; each message is `dotted.key: what is wrong; how to fix it`."""
    problems: list[str] = []
    mix_total = sum(config.data.mix.values())
    if abs(mix_total - 1.0) > 1e-6:
        problems.append(f"data.mix: shares sum to {mix_total:.6f}; they must sum to 1")
    if config.data.shadow_size >= config.data.pool_size:
        problems.append("data.shadow_size: must be smaller than data.pool_size")
    target_total = sum(config.data.difficulty_target.values())
    if set(config.data.difficulty_target) != set(DIFFICULTIES) or abs(target_total - 1.0) > 1e-6:
        problems.append("data.difficulty_target: give easy, medium and hard shares that sum to 1")
    if config.preflight.min_len_tokens > config.preflight.max_len_tokens:
        problems.append("preflight.min_len_tokens: larger than preflight.max_len_tokens")
    problems += _training_problems(config)
    problems += _source_problems(config)
    problems += _sampling_problems(config)
    problems += _tracking_problems(config)
    problems += _function_problems(config)
    problems += _task_problems(config)
    if config.train.save_steps > config.train.max_steps:
        problems.append("train.save_steps: larger than train.max_steps, so no checkpoint would ever be written")
    eval_steps = config.train.eval_steps
    if eval_steps is not None and eval_steps % config.train.save_steps:
        problems.append(
            f"train.eval_steps: {eval_steps} must be a multiple of train.save_steps "
            f"({config.train.save_steps}): evaluations run at checkpoints"
        )
    batch = config.train.per_device_batch_size * config.train.gradient_accumulation_steps
    if batch % config.train.num_generations:
        problems.append(
            f"train.num_generations: {config.train.num_generations} must divide the batch "
            f"(per_device_batch_size × gradient_accumulation_steps = {batch})"
        )
    if is_builtin(config.model.name) and config.model.name not in BUILTIN_MODELS:
        problems.append(
            f"model.name: unknown built-in {config.model.name!r}; the built-in models are {', '.join(BUILTIN_MODELS)}"
        )
    if config.model.warm_start_steps and not is_builtin(config.model.name):
        problems.append("model.warm_start_steps: only the built-in model is warm-started; set it to 0")
    problems += _finetune_problems(config)
    problems += _release_problems(config)
    problems += _monitor_problems(config)
    problems += _thinking_problems(config)
    problems += _episode_problems(config)
    return problems + scorer_problems(config.scorer)


def _episode_problems(config) -> list[str]:
    """Live episodes run only in TRL's tool loop: GRPOTrainer(environment_factory=…). TRL 1.16's RLOOTrainer,
    OnlineDPOTrainer and SFTTrainer take no environment, and the torch engine has no tool loop."""
    engine, strategy = config.engine.name, config.engine.strategy
    tool_problems = _tools_of_yours_problems(config)
    if tool_problems:
        return tool_problems
    if config.data.wiki != "pages" and config.data.episodes != "live":
        return [f"data.wiki: {config.data.wiki} is what wiki shows in live episodes; use --set data.episodes=live"]
    if config.data.pages != "titles" and config.data.episodes != "live":
        return [
            f"data.pages: {config.data.pages} is how live episodes' material is cut into pages (a recorded episode "
            "writes its material into the prompt); use --set data.episodes=live, or data.pages=titles"
        ]
    if config.data.episodes == "live" and (engine, strategy) != ("trl", "grpo"):
        return [
            f"data.episodes: live episodes run in TRL's tool loop (GRPOTrainer's environment_factory), which "
            f"{engine}×{strategy} does not have; use --set engine.name=trl --set engine.strategy=grpo, or "
            "--set data.episodes=recorded"
        ]
    return []


# The built-in tools and TRL's environment methods that are not tools: no tool of yours may take their names.
RESERVED_TOOL_NAMES = ("wiki", "calc", "ask", "reset", "get_reward")


def _tools_of_yours_problems(config) -> list[str]:
    """Your tools (data.tools_of_yours): live episodes only, a name of their own, a path of the form module:function.
    Whether each imports and has a schema is checked where a run first uses them: round 1, training, rescoring
    (rc1/data/user_tools.py `tools_of`, exit 2), not at every load of the config: `rc1 status` runs no code of yours."""
    from rc1.core.user_code import parse_path

    tools = config.data.tools_of_yours
    if tools and config.data.episodes != "live":
        return [
            "data.tools_of_yours: tools are called in live episodes only; use --set data.episodes=live, or remove them"
        ]
    problems, seen = [], set()
    for index, spec in enumerate(tools):
        where = f"data.tools_of_yours[{index}]"
        if spec.name in RESERVED_TOOL_NAMES:
            problems.append(
                f"{where}.name: {spec.name!r} is taken ({', '.join(RESERVED_TOOL_NAMES)}: the built-in tools and TRL's "
                "environment methods); give yours another"
            )
        elif spec.name in seen:
            problems.append(f"{where}.name: {spec.name!r} names two tools; each needs its own name")
        seen.add(spec.name)
        if parse_path(spec.path) is None:
            problems.append(f"{where}.path: {spec.path!r} is not of the form package.module:function")
    return problems


GREEDY_METRICS = ("hard_success", "success", "mean_reward")  # read off the greedy replies (evaluate_buckets)


def _thinking_problems(config) -> list[str]:
    """A thinking model is sampled, never decoded greedily (Qwen3's card: "DO NOT use greedy decoding, as it can lead
    to performance degradation and endless repetitions"; the 2507 Thinking card gives sampled settings only): its
    greedy evaluation is a view that chooses no best/ (and halts nothing: shadow_regression reads its sampled success
    alone)."""
    if config.model.thinking_mode == "on" and config.release.metric in GREEDY_METRICS:
        return [
            f"release.metric: {config.release.metric} chooses best/ by greedy replies, which a thinking model "
            f"(model.thinking: on) decodes into repetition; use the sampled one (hard_sampled_success, sampled_success)"
        ]
    return []


def _monitor_problems(config) -> list[str]:
    """A cost limit needs the judge's prices, or the cost it watches would stay 0."""
    budget = config.monitors.budget
    priced = config.scorer.price_per_million_input_tokens is not None or (
        config.scorer.price_per_million_output_tokens is not None
    )
    if budget is None or priced:
        return []
    return [
        f"monitors.budget.{scope}.judge_cost_usd: a cost limit needs the judge's prices; set "
        "scorer.price_per_million_input_tokens and scorer.price_per_million_output_tokens"
        for scope in ("line", "run")
        if getattr(budget, scope).judge_cost_usd is not None
    ]


def _release_problems(config) -> list[str]:
    tasks = config.release.tasks
    if not tasks or len(set(tasks)) != len(tasks):
        return ["release.tasks: name each task of the release question once (default [hotpotqa, strategyqa])"]
    strangers = [name for name in tasks if name not in config.data.mix]
    if strangers:
        return [
            f"release.tasks: {', '.join(strangers)} not in data.mix; the release question is asked of tasks the "
            f"run trains on"
        ]
    return []


def scorer_problems(scorer) -> list[str]:
    """Keys that would not act for the chosen provider (rc1/registry/providers.py) are refused, so no setting is
    silently ignored; keys it cannot do without are asked for."""
    spec = PROVIDERS[scorer.provider]
    problems = [
        f"scorer.{key}: {spec.name} needs {what}" for key, what in spec.requires.items() if not getattr(scorer, key)
    ]
    if scorer.base_url and not spec.api:
        problems.append(f"scorer.base_url: only API judges use it, and scorer.provider is {spec.name}")
    if scorer.base_url and not re.match(r"^https?://[^\s/]+", scorer.base_url):
        problems.append(f"scorer.base_url: {scorer.base_url!r} is not an http(s) URL")
    if not spec.judges and scorer.model:
        problems.append(f"scorer.model: no judge is configured (scorer.provider: {spec.name})")
    if not spec.judges and scorer.cache:
        problems.append(f"scorer.cache: only judges are cached, and scorer.provider is {spec.name}")
    return problems


def _training_problems(config) -> list[str]:
    """The engine × strategy pair, what train.target_kl needs, and the strategy's and the engine's own rules.
    Each names its fix, also for a strategy switched on the command line (`--set engine.strategy=…`)."""
    engine, spec, train = config.engine.name, STRATEGIES[config.engine.strategy], config.train
    if engine not in spec.engines:
        why = f" ({spec.not_on[engine]})" if spec.not_on and engine in spec.not_on else ""
        supported = ", ".join(f"{e}×{s}" for e, s in pairs())
        return [f"engine: {engine}×{spec.name} is not supported{why}; supported: {supported}"]
    problems = []
    if train.target_kl is not None and spec.target_kl is None:
        problems.append(
            f"train.target_kl: {spec.name} has no KL term to hold near a target (it acts on "
            f"{', '.join(with_target_kl())}); remove it, or add --set train.target_kl=null"
        )
    if train.target_kl is not None and spec.target_kl == "adapts_beta" and train.beta == 0:
        problems.append(
            f"train.target_kl: {spec.name.upper()} adapts β to it, so train.beta must start above 0 "
            "(e.g. --set train.beta=0.04), or remove train.target_kl"
        )
    if train.mask_truncated_completions and not (engine == "trl" and spec.trl.masks_truncated):
        masking = ", ".join(f"trl×{n}" for n, s in STRATEGIES.items() if s.trl is not None and s.trl.masks_truncated)
        problems.append(
            f"train.mask_truncated_completions: TRL's trainers mask cut replies out of the loss ({masking}); "
            f"{engine}×{spec.name} has no such switch: --set train.mask_truncated_completions=false, or use one "
            "of those"
        )
    for rule in spec.rules + ENGINES[engine].rules:
        problems += rule(config)
    return problems


def _finetune_problems(config) -> list[str]:
    problems = []
    if config.finetune.method == "qlora" and is_builtin(config.model.name):
        problems.append("finetune.method: qlora needs a CUDA model from the hub; use lora with builtin models")
    if config.finetune.method == "qlora" and config.train.rollouts in ("vllm", "vllm_server"):
        # TRL 1.16 (trl/generation/vllm_generation.py `_iter_named_params`) merges the adapter into the base before
        # every weight sync and pushes the merged base's parameters: over a 4-bit base those are bitsandbytes'
        # packed uint8 blocks, which vLLM's loader refuses by shape (TRL issues #4973, #3654), and every merge and
        # unmerge re-quantizes the base (#3466).
        problems.append(
            f"train.rollouts: {config.train.rollouts} cannot sample for finetune.method qlora: TRL merges the adapter "
            "into the 4-bit base at every weight sync and sends vLLM its packed 4-bit weights, which vLLM refuses "
            "(TRL #4973, #3654); use finetune.method lora (a bf16 base vLLM can take) with vLLM rollouts, or keep "
            "qlora with train.rollouts: transformers"
        )
    return problems


def _sampling_problems(config) -> list[str]:
    sampling = config.priority_sampling
    if sampling is None:
        return []
    problems = []
    spec = STRATEGIES[config.engine.strategy]
    if spec.trains_on == "gold":
        problems.append(
            f"priority_sampling: {spec.name.upper()} trains on gold replies and sees no reward, so no item "
            "can be found failing; remove the section (or add --set priority_sampling=null), or use a "
            "strategy that learns from rewards"
        )
    if sum(sampling.by_difficulty.values()) <= 0:
        problems.append("priority_sampling.by_difficulty: give at least one bucket a weight above 0")
    steps = [step for step, _ in sampling.seed_ratio_schedule]
    if not steps or steps[0] != 0 or any(b <= a for a, b in zip(steps, steps[1:])):
        problems.append(
            "priority_sampling.seed_ratio_schedule: [[from_step, seed_share], ...] with steps strictly ascending from 0"
        )
    return problems


def _source_problems(config) -> list[str]:
    problems = []
    for task, src in sorted(config.data.sources.items()):
        where = f"data.sources.{task}"
        if (src.path is None) == (src.hub is None):
            problems.append(f"{where}: give `path` (an official-format file) or `hub` (a dataset id), one of them")
        elif src.hub is None and (src.subset is not None or src.shadow_split is not None or src.split != "train"):
            problems.append(
                f"{where}: `subset`, `split` and `shadow_split` choose within a hub dataset; this source is a file"
            )
        elif src.hub is not None and src.shadow_path is not None:
            problems.append(f"{where}: a hub source names its held-out records with `shadow_split`, not `shadow_path`")
    return problems


def _task_problems(config) -> list[str]:
    """Every task in data.mix is a built-in one or yours; yours are well formed."""
    from rc1.core.catalog import CHECK_KINDS, TASKS, is_builtin

    data, problems = config.data, []
    known = (*TASKS, *data.tasks)
    for name, task in data.tasks.items():
        where = f"data.tasks.{name}"
        if name in TASKS:
            problems.append(
                f"{where}: {name} is a built-in task; give it records with data.sources.{name}, or "
                f"name your task otherwise"
            )
        elif not re.match(r"^[a-z][a-z0-9_]*$", name):
            problems.append(f"{where}: a task's name is lowercase letters, digits and _ (it prefixes item ids)")
        if (task.path is None) == (task.hub is None):
            problems.append(f"{where}: give `path` (a .jsonl, .json, .csv or .parquet file) or `hub`, one of them")
        elif task.path is not None and (task.subset is not None or task.split != "train"):
            problems.append(f"{where}: `subset` and `split` choose within a hub dataset; this task reads a file")
        functions = [spec.name for spec in config.reward.functions if spec.path is not None]  # a model checks nothing
        if task.check not in CHECK_KINDS and task.check not in functions:
            problems.append(
                f"{where}.check: {task.check!r} is none of {', '.join(CHECK_KINDS)} and no function (path) of "
                f"reward.functions ({', '.join(functions) or 'none'})"
            )
        if data.mix.get(name, 0.0) <= 0:
            problems.append(f"{where}: give it a share in data.mix (it has none)")
        if task.difficulty == "measured" and is_builtin(config.model.name):
            problems.append(
                f"{where}.difficulty: measured needs a base model to measure the records with; {config.model.name} is "
                f"built from the balanced pool this would decide. Declare a `{task.difficulty_column}` column "
                f"(easy, medium, hard) in the records, or use heuristic"
            )
    unknown = [name for name in data.mix if name not in known]
    if unknown:
        problems.append(
            f"data.mix: unknown task(s) {', '.join(unknown)}; the tasks are {', '.join(TASKS)} and those of data.tasks"
        )
    return problems


def _function_problems(config) -> list[str]:
    from rc1.core.catalog import ITEM_COLUMNS, JUDGE_COMPONENT, LIVE_COMPONENTS, RULE_COMPONENTS, TRL_REWARD_KWARGS
    from rc1.core.user_code import parse_path

    problems, seen = [], set()
    for index, spec in enumerate(config.reward.functions):
        where = f"reward.functions[{index}]"
        if spec.name in (*RULE_COMPONENTS, JUDGE_COMPONENT, *LIVE_COMPONENTS):
            problems.append(f"{where}.name: {spec.name!r} is a built-in component's name; give yours another")
        elif spec.name in seen:
            problems.append(f"{where}.name: {spec.name!r} names two functions; each component needs its own name")
        seen.add(spec.name)
        if (spec.path is None) == (spec.model is None):
            problems.append(f"{where}: give path (a function or, with kwargs, a factory) or model (a reward model)")
        elif spec.path is not None and parse_path(spec.path) is None:
            problems.append(f"{where}.path: {spec.path!r} is not of the form package.module:function")
        elif spec.model is not None and spec.kwargs is not None:
            problems.append(f"{where}.kwargs: a reward model takes no kwargs (kwargs make path a factory)")
    for alias, column in config.reward.columns.items():
        if not alias.isidentifier() or alias in (*ITEM_COLUMNS, *TRL_REWARD_KWARGS):
            problems.append(
                f"reward.columns.{alias}: not a new keyword argument name (a column's own name, or one of TRL's: "
                f"{', '.join(TRL_REWARD_KWARGS)})"
            )
        elif column not in ITEM_COLUMNS:
            problems.append(
                f"reward.columns.{alias}: {column!r} is not a column; the columns: {', '.join(ITEM_COLUMNS)}"
            )
    return problems


def _tracking_problems(config) -> list[str]:
    """A tracker whose client is not installed (rc1/registry/trackers.py: its module, looked up, never imported)."""
    import importlib.util

    missing = [
        f"{name} needs the {spec.extra!r} extra (pip install -e '.[{spec.extra}]')"
        for name in config.tracking.report_to
        for spec in [TRACKERS[name]]
        if importlib.util.find_spec(spec.module) is None
    ]
    return [f"tracking.report_to: {', '.join(missing)}; or leave it out of report_to"] if missing else []
