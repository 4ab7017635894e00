"""Where a task's records come from: a built-in task's official file or hub dataset (`data.sources.<task>`)
and a task of yours (`data.tasks.<name>`)."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta

from rc1.config.sections.base import PositiveInt, Probability, Section
from rc1.core.catalog import DifficultySignal


class SourceConfig(Section):
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


class TaskConfig(Section):
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
