"""The `reward` section: the training reward's components, weights, penalty and difficulty factor, and your
reward functions (`reward.functions[]`)."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from rc1.config.sections.base import NonNegativeFloat, NonNegativeInt, PositiveFloat, Section


class RewardFunctionConfig(Section, kw_only=True):
    """One reward component of yours (rc1/scoring/functions.py): a function with TRL's reward-function signature
    (`path`, or a factory of one with `kwargs`), or a sequence-classification reward model (`model`), each answer in
    [-1, 1] after `scale` and `clip`."""

    name: Annotated[
        str,
        Meta(
            pattern=r"^[a-z][a-z0-9_]*$",
            description="The component's name: in the weights file, `rc1 score`, the rollout archive and train_step's "
            "component means. Not a built-in component's (correctness, f1, format, length, judge, tool_success).",
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


class RewardConfig(Section):
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
