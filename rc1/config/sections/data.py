"""The `data` section: what round 1 materializes (the seed pool, the balanced pool, the shadow and gate sets),
from which tasks in which shares, framed into episodes how."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from rc1.config.sections.base import NonNegativeInt, PositiveInt, Probability, Section
from rc1.config.sections.tasks import SourceConfig, TaskConfig
from rc1.core.catalog import DIFFICULTY_MIX, PRODUCTION_MIX, Difficulty, TaskName


class ToolOfYoursConfig(Section, kw_only=True):
    """One tool of yours for live episodes (rc1/data/user_tools.py): a Python function the policy may call beside
    wiki, calc and ask, its schema built from its type hints and Google-style docstring as TRL builds it."""

    name: Annotated[
        str,
        Meta(
            pattern=r"^[a-z][a-z0-9_]*$",
            description="The tool's name, as the model calls it and the transcript records it: not wiki, calc, ask, "
            "reset or get_reward, and not another tool's.",
        ),
    ]
    path: Annotated[
        str,
        Meta(
            description="package.module:function, imported with the config file's folder first on the import path "
            "(as reward.functions). Typed arguments (str, int, float, bool) only, returns a str, deterministic. Its "
            "source's sha256 is part of the config's fingerprint."
        ),
    ]
    timeout_s: Annotated[
        float,
        Meta(
            gt=0.0,
            le=600.0,
            description="Seconds one call may take; a call that raises or takes longer fails the batch, naming the "
            "tool (exit 1).",
        ),
    ] = 5.0


class DataConfig(Section):
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
    episodes: Annotated[
        Literal["recorded", "live"],
        Meta(
            description="How an episode reaches the policy. recorded: every tool step and user answer is written "
            "into the prompt (rc1/data/episodes.py). live: the prompt holds the instruction and the question (the "
            "under-specified one where the item needs a clarification) and the policy calls wiki, calc and ask "
            "itself, answered from the item's material (rc1/data/environment.py), through TRL's "
            "GRPOTrainer(environment_factory=…): engine trl, strategy grpo."
        ),
    ] = "recorded"
    wiki: Annotated[
        Literal["pages", "empty"],
        Meta(
            description="Live episodes: what wiki shows. pages: the item's own (rc1/data/pages.py). empty: none, every "
            "call a miss (a control arm: `make bench` trains one beside the run to ask whether its gain was earned by "
            "reading the pages). The warm start and round 1's gold-path check read the pages either way."
        ),
    ] = "pages"
    pages: Annotated[
        Literal["titles", "mentions"],
        Meta(
            description="Live episodes: how an item's material is cut into the pages wiki opens. titles: a page per "
            "title, each passage on the page of its heading or leading name (rc1/data/pages.py): a name the question "
            "holds opens a page only where a passage leads with it. mentions: a page per name, every sentence that "
            "names it, one a line (rc1/data/mentions.py), so every name of the question and of a page read opens "
            "one and a gold path is one a reader can follow by copying names. Gold paths, the warm start and the "
            "tools' schema follow it."
        ),
    ] = "titles"
    tools_of_yours: Annotated[
        list[ToolOfYoursConfig],
        Meta(
            description="Live episodes: your tools, each a Python function the policy may call beside wiki, calc and "
            "ask (docs/bring-your-own.md#a-tool-of-yours); every call is recorded and replayed by audit --rescore."
        ),
    ] = msgspec.field(default_factory=list)
    max_tool_rounds: Annotated[
        int,
        Meta(
            ge=1,
            le=16,
            description="Live episodes (data.episodes: live): most rounds of tool results in one rollout (TRL's "
            "max_tool_calling_iterations); a call in the turn after the last round is left unanswered and the "
            "episode unfinished. Tool results count in train.max_completion_tokens too. The default 6 covers every "
            "built-in item's gold path (one round per call: an ask and up to 5 calc steps); the difficulty check names "
            "a live item whose gold path takes more.",
        ),
    ] = 6
    difficulty_target: Annotated[
        dict[Difficulty, Probability],
        Meta(
            description="The balanced pool's bucket shares within every task (easy, medium, hard, summing to 1); "
            "training draws from the balanced pool."
        ),
    ] = msgspec.field(default_factory=lambda: dict(DIFFICULTY_MIX))
