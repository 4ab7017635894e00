"""The sections of the gates a run passes: `preflight` (the checks' thresholds), `shadow` (the shadow run) and
`release` (the release gate and what chooses best/)."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from rc1.config.sections.base import NonNegativeFloat, PositiveInt, Probability, Section


class PreflightConfig(Section):
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


class ShadowConfig(Section):
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


class ReleaseConfig(Section):
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
