"""Live episodes (issue 43), the tech lead's decision: a generated built-in task's live items keep their generator's
difficulty as a declared signal, the path a task of yours with a difficulty column takes (rc1/data/task_difficulty.py
`GENERATED`, `given_tasks`): its slots ask for data.difficulty_target, the balancing keeps each item's label as
given, a fresh item keeps the label it was built for, and the difficulty check names the signal. Recorded episodes
are untouched: no task is added, the slots ask for the calibrated generator mix."""

import shutil
from collections import Counter

import msgspec
import pytest
from conftest import REPO

from rc1.app import datasets
from rc1.checks.difficulty import difficulty_check
from rc1.config.loading import load_config
from rc1.config.recorded import recorded_overrides
from rc1.core.workspace import Workspace
from rc1.data.task_difficulty import GENERATED, generated_tasks, given_tasks

LOCAL = REPO / "configs" / "local.yaml"
SMALL = ["data.pool_size=120", "data.shadow_size=24"]

RECORDED = recorded_overrides()  # configs/local.yaml as the tiny model runs it, recorded (rc1/config/recorded.py)


def test_only_a_live_run_declares_its_generated_tasks_and_never_a_sourced_one_or_one_of_yours():
    recorded = load_config(LOCAL, RECORDED).config.data
    assert generated_tasks(recorded) == frozenset() and given_tasks(recorded) == frozenset(recorded.tasks)
    live = load_config(LOCAL, [*RECORDED, "data.episodes=live", "monitors.drift=null"]).config.data
    assert generated_tasks(live) == given_tasks(live) == {"gsm8k", "hotpotqa", "strategyqa"}
    sourced = msgspec.structs.replace(live, sources={"gsm8k": None})
    assert generated_tasks(sourced) == {"hotpotqa", "strategyqa"}  # a record's label is its slot's, not a generator's


def test_the_generated_signal_is_declared_and_says_so():
    assert GENERATED.kind == "declared"
    assert GENERATED.text("gsm8k") == "gsm8k: declared by its generator (live episodes)"


@pytest.fixture(scope="module")
def live_round(tmp_path_factory):
    root = tmp_path_factory.mktemp("live")
    shutil.copytree(REPO / "configs", root / "configs")
    loaded = load_config(root / "configs/local.yaml", [*RECORDED, *SMALL, "data.episodes=live", "monitors.drift=null"])
    ws = Workspace(root=root, run=loaded.config.run.name)
    pool = datasets.build_seed_pool(loaded, ws)
    metrics = datasets.measure_all(pool)
    balanced = datasets.balance(loaded.config, pool, metrics)
    ws.difficulty_report_path.parent.mkdir(parents=True, exist_ok=True)
    return loaded, ws, pool, metrics, balanced


def test_a_live_pools_slots_ask_for_the_target_and_the_balancing_keeps_the_generators_labels(live_round):
    loaded, _, pool, _, balanced = live_round
    data = loaded.config.data
    assert all(i.template.endswith("/live") for i in pool)
    for task in data.mix:
        counts = Counter(i.difficulty for i in pool if i.task == task)
        n = sum(counts.values())
        expected = {d: round(n * data.difficulty_target[d]) for d in ("easy", "medium", "hard")}
        assert all(abs(counts[d] - expected[d]) <= 1 for d in expected), (task, counts, expected)
    built = {i.id: i.difficulty for i in pool}
    assert all(i.difficulty == built[i.id] for i in balanced.items)  # the label as built, never a measured one
    assert len(balanced.items) / len(pool) >= loaded.config.preflight.min_balanced_fraction


def test_the_difficulty_check_passes_a_live_pool_and_names_each_generated_tasks_signal(live_round):
    loaded, ws, pool, metrics, balanced = live_round
    result = difficulty_check(loaded, ws, pool, metrics, balanced)
    assert result.passed, result.detail
    for task in ("gsm8k", "hotpotqa", "strategyqa"):
        assert f"{task}: declared by its generator (live episodes)" in result.detail
        assert result.measured[f"{task}.signal_declared"] == 1.0
        assert result.measured[f"{task}.over_tool_rounds"] == 0.0  # the live caps still rule
    assert "LIVE_SKIPPED" not in result.detail  # no vote buckets them: nothing is said to be skipped from one


def test_a_recorded_pool_is_still_bucketed_by_the_metrics_vote(tmp_path):
    shutil.copytree(REPO / "configs", tmp_path / "configs")
    loaded = load_config(tmp_path / "configs/local.yaml", [*RECORDED, *SMALL])
    ws = Workspace(root=tmp_path, run=loaded.config.run.name)
    pool = datasets.build_seed_pool(loaded, ws)
    gsm8k = Counter(i.difficulty for i in pool if i.task == "gsm8k")
    n = sum(gsm8k.values())
    assert gsm8k["hard"] / n > 0.6  # the calibrated generator mix (hard 0.65), not the target's 0.30
    metrics = datasets.measure_all(pool)
    ws.difficulty_report_path.parent.mkdir(parents=True, exist_ok=True)
    result = difficulty_check(loaded, ws, pool, metrics, datasets.balance(loaded.config, pool, metrics))
    assert "declared by its generator" not in result.detail
    assert not any(k.endswith(".signal_declared") for k in result.measured)


@pytest.mark.parametrize("episodes", ["recorded", "live"])
def test_a_fresh_generated_item_keeps_its_asked_difficulty_live_and_its_measured_bucket_recorded(episodes, tmp_path):
    from types import SimpleNamespace

    from rc1.app.fresh import FreshItems
    from rc1.data.difficulty import bucket, measure

    loaded = load_config(LOCAL, [*RECORDED, *SMALL, f"data.episodes={episodes}", "monitors.drift=null"])
    session = SimpleNamespace(config=loaded.config, loaded=loaded, ws=Workspace(root=tmp_path, run="x"))
    fresh = FreshItems(session, pool=[], held_out=[])
    items = [fresh._slot(3, k, task, "hard") for k, task in enumerate(["gsm8k", "hotpotqa", "strategyqa"] * 3)]
    if episodes == "live":
        assert all(i.template.endswith("/live") and i.difficulty == "hard" for i in items)
    else:
        assert all(i.difficulty == bucket(measure(i)) for i in items)
        assert any(i.difficulty != "hard" for i in items)  # measured, not the label asked for
