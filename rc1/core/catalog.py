"""The names rc1 knows, each defined once: the tasks, the production task mix, the difficulty mix, and the
built-in model. Everything else (the config schema, the CLI, generators, checks, model loading) imports them."""

from __future__ import annotations

from typing import Literal, get_args

TaskName = Literal["gsm8k", "hotpotqa", "strategyqa"]
TASKS: tuple[str, ...] = get_args(TaskName)

# The reward components rc1 computes itself (rc1/scoring/rules.py, and the judge's); yours (reward.functions)
# take other names.
RULE_COMPONENTS: tuple[str, ...] = ("correctness", "f1", "format", "length")
JUDGE_COMPONENT = "judge"
# The components a live episode adds (data.episodes: live; rc1/scoring/episode_outcome.py `live_components`):
# `tool_success`, the share of its tool calls that worked. A weights file may leave one out (weight 0), so a run's
# reward and weights file stay what they were before it (rc1/scoring/weights.py, rc1/scoring/reward.py).
TOOL_SUCCESS = "tool_success"
LIVE_COMPONENTS: tuple[str, ...] = (TOOL_SUCCESS,)
# The columns of a task item a reward function receives as keyword arguments (one value per completion), and the
# keyword arguments TRL itself passes, which no column (or alias of one, reward.columns) may take.
ITEM_COLUMNS: tuple[str, ...] = ("id", "task", "question", "context", "answer", "difficulty", "needs_clarification")
TRL_REWARD_KWARGS: tuple[str, ...] = (
    "prompts",
    "completions",
    "completion_ids",
    "completion_tokens",
    "trainer_state",
    "log_extra",
    "log_metric",
    "environments",
)

# How a task's answers are checked (rc1/scoring/rules.py): math through math-verify, exact after SQuAD's
# normalization, yes_no, or f1 (exact for correctness, token F1 for the f1 component). A task of yours
# (`data.tasks.<name>.check`) names one of these, or one of your reward functions.
CheckKind = Literal["math", "exact", "yes_no", "f1"]
CHECK_KINDS: tuple[str, ...] = get_args(CheckKind)
BUILTIN_CHECKS: dict[str, str] = {"gsm8k": "math", "hotpotqa": "f1", "strategyqa": "yes_no"}

# The share of each task in the seed pool of a production run (configs/rc1.yaml; the consistency check holds
# a production config to it, and it is the config's default).
PRODUCTION_MIX: dict[str, float] = {"hotpotqa": 0.45, "strategyqa": 0.30, "gsm8k": 0.25}

Difficulty = Literal["easy", "medium", "hard"]
DIFFICULTIES: tuple[Difficulty, ...] = get_args(Difficulty)

# Which limits a run is held to (rc1/checks/consistency.py): `local`, the embedded default's on a CPU; `production`, a
# release; `smoke`, the production path for a few hundred steps on one GPU, whose verdict is computed and labelled not
# a release. The production path's profiles need a live judge and a memory plan as production does.
Profile = Literal["local", "production", "smoke"]
PRODUCTION_PATH_PROFILES: tuple[str, ...] = ("production", "smoke")


def is_release(profile: str) -> bool:
    """Whether a run of this profile's verdict is a release verdict (a smoke run's is not)."""
    return profile != "smoke"


# Where a task of yours takes its records' difficulty from (data.tasks.<name>.difficulty; rc1/data/task_difficulty.py):
# auto chooses among the other three, the best signal the records and the model give.
DifficultySignal = Literal["auto", "declared", "measured", "heuristic"]

# The balanced pool's difficulty buckets within every task (and priority sampling's default weights).
DIFFICULTY_MIX: dict[str, float] = {"easy": 0.25, "medium": 0.45, "hard": 0.30}

# The built-in models, both small Qwen3-architecture models trained on this machine: tiny-qwen3, built offline from
# the pool with a random initialisation (rc1/train/tiny_model.py); the reader, the same size, shipped in the repo
# already trained to copy from its context and to read generated episodes (rc1/reader/): the embedded default's.
BUILTIN_PREFIX = "builtin:"
BUILTIN_TINY = "builtin:tiny-qwen3"
BUILTIN_READER = "builtin:reader"
BUILTIN_MODELS: tuple[str, ...] = (BUILTIN_TINY, BUILTIN_READER)


def is_builtin(model_name: str) -> bool:
    """Whether `model.name` names a built-in model (known or not: rc1/config/rules.py says which are)."""
    return model_name.startswith(BUILTIN_PREFIX)
