"""Round 1 on a seed pool drawn from the official files in ../shared/data (GSM8K train/test, StrategyQA dev),
on the local profile; and a source too small for its share failing round 1 with the count it misses."""

import json

from conftest import SHARED, events, make_workspace, needs_shared, rc1_here

LOCAL_SIZES = {"data.pool_size": 600, "data.shadow_size": 60}  # configs/local.yaml's own sizes


def _sourced(root, **paths) -> list[str]:
    return [arg for key, path in paths.items() for arg in ("--set", f"data.sources.{key}={path}")]


def _check(root, name: str) -> dict:
    return [e for e in events(root) if e.get("name") == name][-1]


@needs_shared
def test_round1_passes_on_a_pool_from_the_official_gsm8k_and_strategyqa_files(tmp_path):
    root = make_workspace(tmp_path, **LOCAL_SIZES)
    gsm8k_train, gsm8k_test, strategyqa = (
        SHARED / "gsm8k/train.jsonl",
        SHARED / "gsm8k/test.jsonl",
        SHARED / "strategyqa/dev.json",
    )
    sources = _sourced(
        root, **{"gsm8k.path": gsm8k_train, "gsm8k.shadow_path": gsm8k_test, "strategyqa.path": strategyqa}
    )
    result = rc1_here(root, "preflight", "--round", "1", *sources)
    assert result.returncode == 0, result.stderr

    pool = [json.loads(line) for line in (root / "data/local/pool.jsonl").read_text().splitlines()]
    sourced = {"gsm8k": str(gsm8k_train), "strategyqa": str(strategyqa)}
    for item in pool:
        assert item["source"] == sourced.get(item["task"], "builtin")
        assert item["turns"] and item["role"] and item["template"]  # dressed as an episode like a generated item
    sources_check = _check(root, "data_sources")
    assert sources_check["type"] == "check_passed"
    assert sources_check["measured"] == {
        "pool.gsm8k.from_source": 150.0,
        "pool.gsm8k.slots": 150.0,
        "pool.strategyqa.from_source": 180.0,
        "pool.strategyqa.slots": 180.0,
        "shadow.gsm8k.from_source": 15.0,
        "shadow.gsm8k.slots": 15.0,
    }

    difficulty = _check(root, "difficulty")
    assert difficulty["type"] == "check_passed"
    assert difficulty["measured"]["balanced_fraction"] >= 0.50
    for task in ("gsm8k", "strategyqa"):  # the sourced tasks meet the same bars as the generated one
        assert (
            difficulty["measured"][f"{task}.hard_share"] >= 0.30
            and difficulty["measured"][f"{task}.easy_share"] <= 0.30
        )
    assert difficulty["measured"]["strategyqa.hard_clue_overlap_p50"] <= 0.20
    assert difficulty["measured"]["strategyqa.easy_clue_overlap_p50"] >= 0.40
    assert _check(root, "leak")["type"] == "check_passed"  # train and test files share no question


@needs_shared
def test_a_source_too_small_for_its_share_fails_round1_and_says_how_many_records_are_missing(tmp_path):
    root = make_workspace(tmp_path)  # the short pool: 240 items, 60 of them gsm8k
    few = root / "configs/gsm8k_few.jsonl"
    few.write_text("".join((SHARED / "gsm8k/test.jsonl").read_text().splitlines(keepends=True)[:45]))
    result = rc1_here(root, "preflight", "--round", "1", *_sourced(root, **{"gsm8k.path": few}))
    assert result.returncode == 3
    assert f"{few}: has 45 distinct gsm8k records; 60 are needed (15 missing" in result.stderr
    failed = _check(root, "data_sources")
    assert failed["type"] == "check_failed" and failed["measured"] == {"gsm8k.missing": 15.0}
    assert [e["type"] for e in events(root)][-2:] == ["check_failed", "gate_failed"]
    assert not (root / "data/local/pool.jsonl").exists() and not (root / "data/local/shadow.jsonl").exists()
