"""A task of yours without a difficulty column, on a configured model: round 1 measures each record's difficulty by
the base model's own replies (always solved: easy, never: hard), draws the pool from what it measured, says so in its
difficulty check, and measures again only when what the labels rest on changes. On the built-in model the same
records fall back to the text metrics, and a bucket they cannot fill is named with what to do about it."""

import json
import random

import msgspec
import pytest
from conftest import events, make_workspace, rc1_here

from rc1.data.task_difficulty import ProbeLabels, from_successes

pytestmark = pytest.mark.e2e

SUBJECTS = "a river a stone a cloud a kite a lamp a bell a drum a ship a tent a coin".split(" a ")


def yes_no_records(n: int) -> list[dict]:
    """Plain comparisons with yes/no answers, no difficulty column."""
    rng = random.Random(3)
    rows, seen = [], set()
    while len(rows) < n:
        a, b = rng.randint(2, 99), rng.randint(2, 99)
        question = f"Is {a} greater than {b}?"
        if a != b and question not in seen:
            seen.add(question)
            rows.append({"question": question, "answer": "yes" if a > b else "no"})
    return rows


def tiny_model(root, rows) -> str:
    """A model of one's own: a tiny Qwen3 whose tokenizer knows the records, taught to answer `Answer: yes|no`."""
    from transformers import AutoTokenizer

    from rc1.data.generators import render_prompt
    from rc1.data.task import TaskItem
    from rc1.scoring.rules import gold_reply
    from rc1.train.prompts import fit_prompt
    from rc1.train.tiny_model import build_tiny_qwen3
    from rc1.train.warm_start import warm_start

    items = [
        TaskItem(
            id=str(i),
            task="yn",
            question=r["question"],
            answer=r["answer"],
            difficulty="medium",
            prompt=render_prompt(r["question"]),
        )
        for i, r in enumerate(rows)
    ]
    base = build_tiny_qwen3([f"{i.prompt}\nAnswer: {i.answer}" for i in items] * 3, root / "base", 7)
    tokenizer = AutoTokenizer.from_pretrained(base)
    pairs = [(fit_prompt(tokenizer, item, 448)[0], gold_reply(item)) for item in items]
    out, _ = warm_start(base, root / "policy", pairs, steps=30, seed=7)
    return str(out)


@pytest.fixture(scope="module")
def measured_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("measured")
    rows = yes_no_records(120)
    model = tiny_model(tmp_path_factory.mktemp("model"), rows)
    make_workspace(
        root,
        **{
            "model.name": model,
            "model.warm_start_steps": 0,
            "data.tasks": {"yn": {"path": "yn.jsonl", "check": "yes_no"}},
            "data.mix": {"gsm8k": 0.25, "hotpotqa": 0.3, "strategyqa": 0.25, "yn": 0.2},
            "preflight.min_distinct2": 0.99,  # a check failing apart from the difficulty: round 1 runs again
        },
    )
    (root / "configs/yn.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    first = rc1_here(root, "advance")
    return root, first


def test_round_1_measures_a_task_without_a_column_by_the_base_models_replies(measured_run):
    root, first = measured_run
    assert first.returncode == 3 and "measuring yn's difficulty: 120 records × 4 replies" in first.stdout
    labels = msgspec.json.decode((root / "data/local/difficulty_probe_yn.json").read_bytes(), type=ProbeLabels)
    assert labels.samples == 4 and len(labels.items) == 120
    assert all(p.difficulty == from_successes(p.solved, 4) for p in labels.items)
    probes = [e for e in events(root) if e["type"] == "artifact_written" and e["kind"] == "difficulty_probe"]
    assert len(probes) == 1 and probes[0]["path"] == "data/local/difficulty_probe_yn.json"
    # The pool's items of the task carry the probe's labels: the difficulty the balancing and the reward see.
    pool = [json.loads(line) for line in (root / "data/local/pool.jsonl").read_text().splitlines()]
    mine = [item for item in pool if item["task"] == "yn"]
    assert mine and all(item["difficulty"] == labels.labels()[item["id"]] for item in mine)
    check = next(e for e in events(root) if e["type"].startswith("check_") and e["name"] == "difficulty")
    n, always = 120, sum(p.solved == 4 for p in labels.items)
    never = sum(p.solved == 0 for p in labels.items)
    assert "yn: difficulty measured (no `difficulty` column; the base model measures the 120 records" in check["detail"]
    assert (
        f"solved {always} of {n} records in all 4 replies, {never} in none, {n - always - never} sometimes"
        in check["detail"]
    )
    assert check["measured"]["yn.signal_measured"] == 1.0 and check["measured"]["yn.probe_records"] == 120


def test_round_1_again_reuses_the_labels_and_measures_anew_when_what_they_rest_on_changes(measured_run):
    root, _ = measured_run
    config = root / "configs/short.yaml"
    config.write_text(config.read_text().replace("min_distinct2: 0.99", "min_distinct2: 0.98"))
    again = rc1_here(root, "advance", "--accept-changed-inputs")
    assert again.returncode == 3 and "measuring yn's difficulty" not in again.stdout
    config.write_text(config.read_text().replace("check: yes_no", "check: yes_no\n      probe_samples: 2"))
    anew = rc1_here(root, "advance", "--accept-changed-inputs")
    assert "measuring yn's difficulty: 120 records × 2 replies" in anew.stdout
    probes = [e for e in events(root) if e["type"] == "artifact_written" and e["kind"] == "difficulty_probe"]
    assert len(probes) == 2


def test_on_the_built_in_model_plain_records_fall_back_to_the_text_metrics_and_a_short_bucket_says_what_to_do(tmp_path):
    root = make_workspace(
        tmp_path,
        **{
            "data.tasks": {"yn": {"path": "yn.jsonl", "check": "yes_no"}},
            "data.mix": {"gsm8k": 0.25, "hotpotqa": 0.3, "strategyqa": 0.25, "yn": 0.2},
        },
    )
    (root / "configs/yn.jsonl").write_text("".join(json.dumps(r) + "\n" for r in yes_no_records(120)))
    refused = rc1_here(root, "advance")
    assert refused.returncode == 3
    check = next(e for e in events(root) if e["type"] == "check_failed" and e["name"] == "difficulty")
    assert (
        "yn: difficulty heuristic (no `difficulty` column, and the built-in model is built from the balanced pool"
        in check["detail"]
    )
    assert "turns and tool_hops skipped: a record has none" in check["detail"]
    assert "declare a difficulty column of easy/medium/hard (data.tasks.yn.difficulty_column)" in check["detail"]
    measured = rc1_here(root, "advance", "--set", "data.tasks.yn.difficulty=measured")
    assert measured.returncode == 2 and "measured needs a base model to measure the records with" in measured.stderr
