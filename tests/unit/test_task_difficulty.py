"""A task of yours is judged by what it is: its records' difficulty comes from the best signal they and the model
give (a declared column, the base model's measured success, the text metrics without the dimensions a record cannot
have), every item keeps it through the draw and the balancing, and the checks say which signal a task used."""

import json

import msgspec
import pytest
from conftest import REPO

from rc1.checks.difficulty import difficulty_limits, validate
from rc1.checks.diversity import distinct2
from rc1.config.loading import load_config
from rc1.core.errors import BadInput
from rc1.data.balance import rebalance
from rc1.data.difficulty import measure, votes
from rc1.data.loaders import load_source, your_records
from rc1.data.source_ref import Columns, DifficultyRef, SourceRef
from rc1.data.sources import replace_from_sources
from rc1.data.task import TaskItem
from rc1.data.task_difficulty import ProbedItem, ProbeLabels, from_successes, resolve

LIMITS = difficulty_limits(load_config(REPO / "configs/local.yaml").config)
TARGET = {"easy": 0.25, "medium": 0.45, "hard": 0.30}


def records(n: int, *, with_difficulty: bool = True) -> list[dict]:
    """Plain arithmetic as a user writes it: one to three operations, the difficulty by their count."""
    rows = []
    for i in range(n):
        ops = 1 + i % 3
        terms = [str(7 + (i * 13 + k * 5) % 50) for k in range(ops + 1)]
        question = f"What is {' + '.join(terms)}?"
        row = {"question": question, "answer": sum(map(int, terms))}
        if with_difficulty:
            row["difficulty"] = ("easy", "medium", "hard")[ops - 1]
        rows.append(row)
    return rows


def ref_of(path, part="all", **difficulty) -> SourceRef:
    return SourceRef(
        path=path,
        columns=Columns(question="question", answer="answer"),
        part=part,
        held_out_share=0.2,
        difficulty=DifficultyRef(**difficulty),
    )


def write(tmp_path, rows, name="arith.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_a_declared_difficulty_column_is_used_as_given(tmp_path):
    rows = records(90)
    loaded = your_records("arith", ref_of(write(tmp_path, rows)))
    assert loaded.signal.kind == "declared" and "the records have a `difficulty` column" in loaded.signal.reason
    assert [item.difficulty for item in loaded.items] == [row["difficulty"] for row in rows]


def test_a_difficulty_that_is_no_bucket_names_the_record_and_column(tmp_path):
    rows = records(6)
    rows[4]["difficulty"] = "tricky"
    with pytest.raises(BadInput) as error:
        your_records("arith", ref_of(write(tmp_path, rows)))
    assert "arith.jsonl[4]: column `difficulty` is 'tricky'; a difficulty is easy, medium or hard" in str(error.value)


def test_declared_without_the_column_is_refused_naming_the_columns_there_are(tmp_path):
    path = write(tmp_path, records(6, with_difficulty=False))
    with pytest.raises(BadInput) as error:
        your_records("arith", ref_of(path, signal="declared"))
    assert "declared, but the records have no column `difficulty` (they have question, answer)" in str(error.value)


@pytest.mark.parametrize(
    "columns, records_, ref, kind, why",
    [
        (["question", "answer", "difficulty"], 50, {}, "declared", "the records have a `difficulty` column"),
        (["question", "answer"], 50, {"can_measure": True}, "measured", "the base model measures the 50 records"),
        (["question", "answer"], 50, {}, "heuristic", "the built-in model is built from the balanced pool"),
        (["question", "answer"], 5000, {"can_measure": True}, "heuristic", "5000 records are more than"),
        (["question", "answer", "level"], 50, {"column": "level"}, "declared", "a `level` column"),
        (["question", "answer", "difficulty"], 50, {"signal": "heuristic"}, "heuristic", "difficulty: heuristic"),
    ],
)
def test_auto_takes_the_best_signal_the_records_and_the_model_give(columns, records_, ref, kind, why):
    signal = resolve("arith", DifficultyRef(**ref), columns, records_)
    assert signal.kind == kind and why in signal.reason
    assert signal.skipped == (("turns", "tool_hops") if kind == "heuristic" else ())


def test_the_heuristics_skip_turns_and_tool_hops_by_name_on_a_plain_record(tmp_path):
    loaded = your_records("arith", ref_of(write(tmp_path, records(30, with_difficulty=False))))
    assert loaded.signal.kind == "heuristic"
    assert "turns and tool_hops skipped: a record has none" in loaded.signal.text("arith")
    for item in loaded.items:
        cast = votes(measure(item), frozenset(loaded.signal.skipped))
        assert "turns" not in cast and "tool_hops" not in cast
        assert "turns" in votes(measure(item))  # what they would have voted: easy, on every record


def test_measured_labels_are_always_easy_never_hard_else_medium():
    assert [from_successes(s, 4) for s in range(5)] == ["hard", "medium", "medium", "medium", "easy"]


def test_a_measured_task_draws_only_the_records_its_probe_labelled_with_the_probes_labels(tmp_path):
    path = write(tmp_path, records(40, with_difficulty=False))
    labels = tmp_path / "difficulty_probe_arith.json"
    ids = [item.id for item in your_records("arith", ref_of(path, signal="measured")).items]
    probed = ProbeLabels(
        task="arith",
        key="k",
        model="m",
        samples=4,
        temperature=1.0,
        max_completion_tokens=24,
        seconds=1.0,
        items=[
            ProbedItem(id=i, solved=k % 5, cut=0, difficulty=from_successes(k % 5, 4)) for k, i in enumerate(ids[:30])
        ],
    )
    labels.write_bytes(msgspec.json.encode(probed))
    items = load_source("arith", ref_of(path, signal="measured", labels=labels))
    assert {item.id for item in items} == set(ids[:30])  # the 10 records it did not probe are not drawn
    assert all(item.difficulty == probed.labels()[item.id] for item in items)
    with pytest.raises(BadInput) as error:  # not probed yet: named, never drawn unlabelled
        load_source("arith", ref_of(path, signal="measured"))
    assert "round 1's probe, which has not run for this run" in str(error.value)


def test_slots_take_records_by_label_but_never_relabel_them(tmp_path):
    rows = [row for row in records(90) if row["difficulty"] != "hard"]  # a file without hard records
    ref = ref_of(write(tmp_path, rows), part="pool")
    slots = [
        TaskItem(id=f"arith-{i:06d}", task="arith", question="", answer="", prompt="", difficulty=d)
        for i, d in enumerate(["hard"] * 10 + ["medium"] * 10 + ["easy"] * 10)
    ]
    drawn = replace_from_sources(slots, {"arith": ref}, 1234, by_difficulty=False)
    declared = {row["question"]: row["difficulty"] for row in rows}
    assert all(item.difficulty == declared[item.question] for item in drawn)  # a hard slot holds a medium record


def test_rebalancing_buckets_a_task_of_yours_by_its_own_labels_not_the_metrics_vote(tmp_path):
    items = list(your_records("arith", ref_of(write(tmp_path, records(120)))).items)
    metrics = [measure(item) for item in items]
    by_votes = rebalance(items, metrics, TARGET, {"arith": 1.0}, 1234)
    given = rebalance(items, metrics, TARGET, {"arith": 1.0}, 1234, given=frozenset({"arith"}))
    assert given.seed_buckets["arith"] == {"easy": 40, "medium": 40, "hard": 40}
    assert by_votes.seed_buckets["arith"]["hard"] == 0  # the text metrics see no hard arithmetic
    # Medium is the scarce bucket (40 of the 45 % of every size): the largest pool at the target's shares.
    assert given.balanced_buckets["arith"] == {"easy": 22, "medium": 40, "hard": 27}
    assert [(s.bucket, s.available) for s in given.shortfalls] == [("medium", 40)]
    result = validate(
        given,
        len(items),
        {m.id: m for m in metrics},
        LIMITS,
        {"arith": resolve("arith", DifficultyRef(), ["difficulty"], 120)},
    )
    assert "arith: difficulty declared (the records have a `difficulty` column)" in result.detail


def test_a_short_bucket_of_a_heuristic_task_says_to_declare_or_measure_not_to_add_tool_hops(tmp_path):
    items = list(your_records("arith", ref_of(write(tmp_path, records(120, with_difficulty=False)))).items)
    metrics = [measure(item) for item in items]
    signal = resolve("arith", DifficultyRef(), ["question", "answer"], 120)
    balanced = rebalance(items, metrics, TARGET, {"arith": 1.0}, 1234, given=frozenset({"arith"}))
    result = validate(balanced, len(items), {m.id: m for m in metrics}, LIMITS, {"arith": signal})
    assert not result.passed and "arith/hard has 0 items" in result.detail
    assert "declare a difficulty column of easy/medium/hard (data.tasks.arith.difficulty_column)" in result.detail
    assert "tool hops" not in result.detail.split("arith: difficulty heuristic")[0]  # no advice about episodes
    assert "tool_hops votes" not in result.detail and "turns votes" not in result.detail


def test_a_task_of_yours_may_set_its_own_distinct2_floor_and_the_message_names_the_binding_one():
    import random

    words = random.Random(0).choices("alpha beta gamma delta river stone cloud ember frost grove quill".split(), k=4000)
    plain = [
        TaskItem(id=f"a-{i}", task="arith", question=row["question"], answer="1", prompt="", difficulty="easy")
        for i, row in enumerate(records(300))
    ]
    prose = [
        TaskItem(
            id=f"p-{i}",
            task="prose",
            question=" ".join(words[i * 40 : i * 40 + 40]),
            answer="x",
            prompt="",
            difficulty="easy",
        )
        for i in range(3)
    ]
    alone = distinct2(plain + prose, 0.6)
    assert not alone.passed and "arith 0.084 < 0.60 (preflight.min_distinct2)" in alone.detail
    own = distinct2(plain + prose, 0.6, {"arith": 0.05})
    assert own.passed and own.thresholds["arith.min"] == 0.05 and "arith at least 0.05, its own" in own.detail
    strict = distinct2(plain + prose, 0.6, {"arith": 0.5})
    assert not strict.passed and "arith 0.084 < 0.50 (data.tasks.arith.min_distinct2)" in strict.detail
    assert "prose" not in strict.detail  # the built-in floor still binds the others, and they clear it
