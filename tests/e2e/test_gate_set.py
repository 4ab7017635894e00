"""The gate set: a third gated input, drawn in round 1 from its own stream, hard items of the release tasks only,
apart from the shadow set and the pool, fingerprinted like them, and never used to choose anything."""

import json
import signal

import msgspec
import pytest
from conftest import FULL_VERDICT, SHARED, events, make_workspace, needs_shared, rc1_here, rc1_killed_at

from rc1.app.datasets import build_held_out
from rc1.checks.gate_set import gate_set_check
from rc1.config.loading import load_config
from rc1.core.fsutil import sha256_file
from rc1.core.workspace import Workspace
from rc1.data.task import read_items

GATE = {"release.gate_size": 90}


def test_round1_draws_the_gate_set_hard_items_of_the_release_tasks_apart_from_the_shadow_set(tmp_path):
    root = make_workspace(tmp_path, **GATE)
    result = rc1_here(root, "preflight", "--round", "1")
    assert result.returncode == 0, result.stderr
    gate, shadow = read_items(root / "data/local/gate.jsonl"), read_items(root / "data/local/shadow.jsonl")
    assert len(gate) == 90 and {item.difficulty for item in gate} == {"hard"}
    assert [sum(item.task == task for item in gate) for task in ("hotpotqa", "strategyqa")] == [54, 36]  # 0.45 : 0.30
    assert all(item.id.startswith(f"gate-{item.task}-") for item in gate)
    assert not {item.id for item in gate} & {item.id for item in shadow}
    assert not {item.question for item in gate} & {item.question for item in shadow}
    assert all(item.turns and item.template for item in gate)  # dressed as episodes, like the shadow set

    manifest = json.loads((root / "data/local/gate_manifest.json").read_text())
    assert manifest["ids"] == [item.id for item in gate] and manifest["sha256"] == sha256_file(
        root / "data/local/gate.jsonl"
    )
    log = events(root)
    check = next(e for e in log if e.get("name") == "gate_set")
    assert (
        check["type"] == "check_passed"
        and check["measured"]["pool_leaked"] == 0
        and check["measured"]["in_shadow"] == 0
    )
    passed = next(e for e in log if e["type"] == "round1_passed")
    assert passed["fingerprints"]["gate"] == manifest["sha256"]
    assert {"path": "data/local/gate.jsonl", "kind": "gate"}.items() <= next(
        e for e in log if e["type"] == "artifact_written" and e["kind"] == "gate"
    ).items()


def test_a_gate_set_changed_after_round_1_invalidates_the_gate(tmp_path):
    root = make_workspace(tmp_path, **GATE)
    assert rc1_here(root, "preflight", "--round", "1").returncode == 0
    path = root / "data/local/gate.jsonl"
    path.write_text("".join(path.read_text().splitlines(keepends=True)[1:]))  # one item fewer
    before = (root / "events/local.jsonl").read_bytes()
    refused = rc1_here(root, "preflight", "--round", "2")
    assert refused.returncode == 3 and "gate:" in refused.stderr and "--accept-changed-inputs" in refused.stderr
    assert (root / "events/local.jsonl").read_bytes() == before  # refused: nothing appended
    result = rc1_here(root, "preflight", "--round", "2", "--accept-changed-inputs")
    assert result.returncode == 3 and "gate:" in result.stderr
    invalidated = events(root)[-1]
    assert invalidated["type"] == "gate_invalidated" and invalidated["input"] == "gate"


def _items(root, name):
    return read_items(root / f"data/local/{name}.jsonl")


@pytest.fixture(scope="module")
def drawn(tmp_path_factory):
    root = make_workspace(tmp_path_factory.mktemp("gate"), **GATE)
    assert rc1_here(root, "preflight", "--round", "1").returncode == 0
    return _items(root, "gate"), _items(root, "shadow"), _items(root, "pool")


def test_the_gate_set_check_fails_when_a_pool_item_leaks_from_it(drawn):
    gate, shadow, pool = drawn
    leaky = pool + [msgspec.structs.replace(gate[3], id="hotpotqa-999999")]
    result = gate_set_check(gate, shadow, leaky, size=90, tasks=["hotpotqa", "strategyqa"], ngram=5, similarity=0.85)
    assert not result.passed and result.measured["pool_leaked"] == 1
    assert f"hotpotqa-999999 ~ {gate[3].id} (same question)" in result.detail


def test_the_gate_set_check_fails_on_a_shadow_item_an_easy_item_or_the_wrong_size(drawn):
    gate, shadow, pool = drawn
    hard_shadow = next(item for item in shadow if item.difficulty == "hard" and item.task == "hotpotqa")
    mixed = gate[:-2] + [hard_shadow, msgspec.structs.replace(gate[-1], difficulty="easy")]
    result = gate_set_check(mixed, shadow, pool, size=90, tasks=["hotpotqa", "strategyqa"], ngram=5, similarity=0.85)
    assert not result.passed and (result.measured["in_shadow"], result.measured["not_hard"]) == (1, 1)
    result = gate_set_check(
        gate[:80], shadow, pool, size=90, tasks=["hotpotqa", "strategyqa"], ngram=5, similarity=0.85
    )
    assert not result.passed and "80 items, release.gate_size is 90" in result.detail
    result = gate_set_check(gate, shadow, pool, size=90, tasks=["hotpotqa"], ngram=5, similarity=0.85)
    assert not result.passed and result.measured["off_task"] == 36


@needs_shared
def test_held_out_records_are_shared_out_between_the_shadow_and_gate_sets_never_both(tmp_path):
    root = make_workspace(tmp_path, **GATE)
    dev = SHARED / "strategyqa/dev.json"
    loaded = load_config(
        root / "configs/short.yaml",
        [f"data.sources.strategyqa.path={dev}", f"data.sources.strategyqa.shadow_path={dev}"],
    )
    ws = Workspace(root=root, run=loaded.config.run.name)
    held = build_held_out(loaded, ws)
    alone = build_held_out(
        load_config(
            root / "configs/short.yaml",
            [
                f"data.sources.strategyqa.path={dev}",
                f"data.sources.strategyqa.shadow_path={dev}",
                "release.gate_size=2",
                "release.tasks=[hotpotqa]",
            ],
        ),
        ws,
    )
    assert held.shadow == alone.shadow  # the shadow slots come first and take the records they would alone
    gate_records = [item for item in held.gate if item.task == "strategyqa"]
    shadow_records = [item for item in held.shadow if item.task == "strategyqa"]
    assert len(gate_records) == 36 and all(item.source == str(dev) for item in gate_records + shadow_records)
    assert not {item.question for item in gate_records} & {item.question for item in shadow_records}


def test_round_2_refuses_a_gate_set_too_small_to_tell_the_threshold_from_noise_and_names_a_size_that_would(tmp_path):
    root = make_workspace(tmp_path, **{**FULL_VERDICT, "release.gate_size": 10, "release.min_hard_gain_pp": 2.0})
    result = rc1_here(root, "advance", "--until", "R2_PASSED")
    assert result.returncode == 3
    log = events(root)
    base = [e for e in log if e["type"] == "gate_set_evaluated"]
    assert [(e["policy"], e["step"], len(e["sampled"]), e["samples"]) for e in base] == [("base", 0, 10, 8)]
    check = [e for e in log if e.get("name") == "release_power"][-1]
    measured = check["measured"]
    assert (
        check["type"] == "check_failed"
        and measured["n"] == 10
        and measured["mde_pp"] > 2.0 == check["thresholds"]["mde_pp"]
    )
    assert (
        measured["n_needed"] > 10 and f"set release.gate_size to at least {measured['n_needed']:.0f}" in result.stderr
    )
    assert log[-1]["type"] == "gate_failed" and log[-1]["failures"] == ["release_power"]


@pytest.mark.e2e
def test_a_run_killed_after_the_selected_checkpoints_gate_evaluation_completes_from_that_evaluation(tmp_path):
    root = make_workspace(tmp_path, **{"train.max_steps": 4, "train.save_steps": 2, "train.eval_steps": 2})
    killed = rc1_killed_at(root, "append:gate_set_evaluated@2")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    log = events(root)
    assert [e["policy"] for e in log if e["type"] == "gate_set_evaluated"] == ["base", "selected"]
    assert "release_evaluated" not in {e["type"] for e in log}

    result = rc1_here(root, "advance", "--all")
    assert result.returncode == 0, result.stderr
    log = events(root)
    base, selected = [e for e in log if e["type"] == "gate_set_evaluated"]  # not evaluated a second time
    assert [e["type"] for e in log][-2:] == ["release_evaluated", "run_completed"]
    release = log[-2]
    gain = 100 * (sum(selected["sampled"]) - sum(base["sampled"])) / (selected["samples"] * len(selected["sampled"]))
    assert (release["step"], release["hard_gain_pp"]) == (selected["step"], pytest.approx(gain))
    assert "release (RC1 gate)" in result.stdout and f"gain {release['hard_gain_pp']:+.1f} pp" in result.stdout
    assert rc1_here(root, "audit").returncode == 0
