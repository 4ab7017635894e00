"""Preflight data checks: each passes on real generated data and fails on data built to break it."""

import json

import msgspec
import pytest
from conftest import REPO

from rc1.checks.diversity import distinct2, length_bounds, task_mix
from rc1.checks.duplicates import duplicate_rate
from rc1.checks.leak import leak_check
from rc1.checks.resources import free_disk
from rc1.checks.weights import weights_check
from rc1.core.errors import BadInput
from rc1.data.generators import render_prompt
from rc1.data.pool import build_pool, build_shadow
from rc1.data.task import TaskItem
from rc1.data.text import ngram_keys, ngrams, normalize, tokens
from rc1.scoring.rules import RULE_COMPONENTS
from rc1.scoring.weights import load_weights

MIX = {"hotpotqa": 0.45, "strategyqa": 0.30, "gsm8k": 0.25}


@pytest.fixture(scope="module")
def pool():
    return build_pool(600, MIX, seed=1234)


@pytest.fixture(scope="module")
def shadow():
    return build_shadow(60, MIX, seed=4242)


def _item(i: int, question: str, task: str = "gsm8k", context: str = "") -> TaskItem:
    return TaskItem(
        id=f"x-{i:06d}",
        task=task,
        question=question,
        context=context,
        answer="1",
        difficulty="easy",
        prompt=render_prompt(question, context),
    )


# --- text -----------------------------------------------------------------------------------------


def test_text_units():
    assert normalize("  The RIVER,\tOstrel!  (1,250 km) ") == "the river ostrel 1250 km"
    assert tokens("Dorvel's 1,250 coins; $3.50 each — fine.") == ["Dorvel's", "1,250", "coins", "3.50", "each", "fine"]
    assert ngrams(["a", "b", "c"], 2) == [("a", "b"), ("b", "c")] and ngrams(["a"], 2) == []
    keys, owner = ngram_keys([["a", "b", "c"], ["a", "b"], ["z"]], 2)
    assert owner.tolist() == [0, 0, 1] and keys[0] == keys[2] != keys[1]  # no n-gram spans two texts


# --- distinct2 ------------------------------------------------------------------------------------


def test_distinct2_passes_on_the_generated_pool(pool):
    result = distinct2(pool, 0.60)
    assert result.passed and set(result.measured) == {"gsm8k", "hotpotqa", "strategyqa", "overall"}
    assert all(v >= 0.60 for v in result.measured.values())


def test_distinct2_fails_on_one_prompt_repeated_with_a_number_changed(pool):
    template = "Mara has {n} apples and buys 3 more at the market on the corner. How many apples does Mara have now?"
    low = [_item(i, template.format(n=i)) for i in range(500)]
    result = distinct2(pool[:100] + low, 0.60)
    assert not result.passed and result.measured["gsm8k"] < 0.25  # the task text alone; framing is left out
    assert "gsm8k" in result.detail and result.measured["hotpotqa"] >= 0.60
    assert not distinct2([], 0.60).passed


# --- task mix -------------------------------------------------------------------------------------


def test_task_mix_passes_on_target_and_fails_when_off_by_ten_points(pool):
    assert task_mix(pool, MIX, 0.03).passed
    skewed = [i for i in pool if i.task != "strategyqa"] + [i for i in pool if i.task == "strategyqa"][:110]
    # 530 items: hotpotqa 270 (50.9%), strategyqa 110 (20.8%), gsm8k 150 (28.3%)
    result = task_mix(skewed, MIX, 0.03)
    assert not result.passed
    assert result.measured["strategyqa.deviation_pp"] == pytest.approx(100 * (0.30 - 110 / 530))
    assert "strategyqa" in result.detail
    assert not task_mix([], MIX, 0.03).passed


# --- length bounds --------------------------------------------------------------------------------


def test_length_bounds_measures_tokens_and_fails_outside_the_bounds(pool):
    result = length_bounds(pool, 64, 4096)
    assert result.passed and result.measured["out_of_bounds"] == 0
    assert 64 <= result.measured["min"] <= result.measured["p50"] <= result.measured["max"] <= 4096
    short = pool[:10] + [_item(0, "Two plus two?")]
    result = length_bounds(short, 64, 4096)
    assert not result.passed and result.measured["out_of_bounds"] == 1 and result.measured["min"] == 8
    assert not length_bounds(pool[:10], 16, 40).passed


def test_length_bounds_are_reported_per_task_and_name_the_offending_task(pool):
    result = length_bounds(pool + [_item(0, "Two plus two?", task="gsm8k")], 64, 4096)
    for task in MIX:
        assert result.measured[f"{task}.min"] <= result.measured[f"{task}.p50"] <= result.measured[f"{task}.max"]
    assert result.measured["gsm8k.out_of_bounds"] == 1 and result.measured["hotpotqa.out_of_bounds"] == 0
    assert "by task: gsm8k 1" in result.detail


# --- duplicates -----------------------------------------------------------------------------------


def test_duplicate_rate_is_zero_on_the_generated_pool(pool):
    result = duplicate_rate(pool, 0.02, 0.85)
    assert result.passed and result.measured == {
        "rate": 0.0,
        "exact": 0.0,
        "near": 0.0,
        "items": 600.0,
        "gsm8k.rate": 0.0,
        "hotpotqa.rate": 0.0,
        "strategyqa.rate": 0.0,
    }


def test_duplicates_concentrated_in_one_task_fail_that_task_even_when_the_overall_rate_passes(pool):
    gsm8k = [item for item in pool if item.task == "gsm8k"]
    copies = [msgspec.structs.replace(item, id=f"copy-{k}") for k, item in enumerate(gsm8k[:6])]
    result = duplicate_rate(pool + copies, 0.02, 0.85)
    assert result.measured["rate"] == pytest.approx(6 / 606) and result.measured["rate"] < 0.02
    assert result.measured["gsm8k.rate"] == pytest.approx(6 / (len(gsm8k) + 6)) and result.measured["gsm8k.rate"] > 0.02
    assert result.measured["hotpotqa.rate"] == 0.0
    assert not result.passed and "above the limit in gsm8k" in result.detail


def test_injected_exact_duplicates_fail_the_check_and_are_counted(pool):
    copies = [
        msgspec.structs.replace(item, id=f"copy-{k}", question=item.question.upper() + "!!")
        for k, item in enumerate(pool[:30])
    ]  # equal after normalization
    result = duplicate_rate(pool + copies, 0.02, 0.85)
    assert not result.passed and result.measured["exact"] == 30 and result.measured["rate"] == pytest.approx(30 / 630)
    assert "copy-0" in result.detail


def test_near_duplicates_are_found_by_minhash_and_confirmed_by_jaccard(pool):
    long_items = [i for i in pool if len(normalize(f"{i.context} {i.question}").split()) > 60][:20]
    edited = []
    for k, item in enumerate(long_items):
        words = item.question.split()
        words[-1] = "differently?"  # one word changed: Jaccard of 5-gram shingles stays above 0.9
        edited.append(msgspec.structs.replace(item, id=f"near-{k}", question=" ".join(words)))
    result = duplicate_rate(pool + edited, 0.02, 0.85)
    assert result.measured["exact"] == 0 and result.measured["near"] == 20 and not result.passed
    # below the similarity bar they are not duplicates
    assert duplicate_rate(pool + edited, 0.02, 0.999).measured["near"] == 0


# --- leak -----------------------------------------------------------------------------------------


def test_the_default_pool_and_shadow_set_do_not_leak(pool, shadow):
    result = leak_check(pool, shadow, 5, 0.85)
    assert result.passed and result.measured == {
        "leaked": 0.0,
        "checked": 600.0,
        "gsm8k.leaked": 0.0,
        "hotpotqa.leaked": 0.0,
        "strategyqa.leaked": 0.0,
    }


def test_a_pool_built_from_the_shadow_items_leaks_every_item(pool, shadow):
    stolen = [msgspec.structs.replace(item, id=f"gsm8k-9{k:05d}") for k, item in enumerate(shadow)]
    result = leak_check(pool + stolen, shadow, 5, 0.85)
    assert not result.passed and result.measured["leaked"] == 60
    assert sum(result.measured[f"{task}.leaked"] for task in MIX) == 60
    assert "gsm8k-900000 ~ shadow-" in result.detail and result.detail.count(" ~ ") == 5


def test_a_reworded_question_over_a_copied_context_still_leaks(pool, shadow):
    source = next(i for i in shadow if i.task == "hotpotqa")
    reworded = msgspec.structs.replace(source, id="hotpotqa-999999", question="Tell me something about these people.")
    result = leak_check(pool + [reworded], shadow, 5, 0.85)
    assert result.measured["leaked"] == 1 and "hotpotqa-999999" in result.detail and "containment" in result.detail


def test_containment_is_measured_against_the_smaller_item(pool, shadow):
    source = next(i for i in shadow if i.task == "hotpotqa")
    first = source.context.split("\n")[0]
    cut = msgspec.structs.replace(source, id="cut", question="Who is this?", context=first)  # a piece of a shadow item
    assert not leak_check(pool + [cut], shadow, 5, 0.85).passed
    other = next(i for i in pool if i.task == "hotpotqa")
    mixed = msgspec.structs.replace(cut, id="mixed", context=first + "\n" + other.context)  # half its own text
    assert leak_check(pool + [mixed], shadow, 5, 0.85).passed
    assert not leak_check(pool + [mixed], shadow, 5, 0.30).passed


# --- weights --------------------------------------------------------------------------------------


def _weights(tmp_path, content) -> object:
    path = tmp_path / "weights.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


def test_the_shipped_weights_pass():

    path = REPO / "configs" / "weights.json"
    result = weights_check(path, RULE_COMPONENTS)
    assert result.passed and result.measured["sum"] == pytest.approx(1.0)
    assert load_weights(path, RULE_COMPONENTS) == {"correctness": 0.5, "f1": 0.15, "format": 0.2, "length": 0.15}
    judged = path.with_name("weights_judge.json")
    assert weights_check(judged, (*RULE_COMPONENTS, "judge")).passed
    assert "unknown component 'judge'" in weights_check(judged, RULE_COMPONENTS).detail


@pytest.mark.parametrize(
    "content, message",
    [
        ({"correctness": 0.6, "f1": 0.1, "format": 0.2, "length": 0.1}, "correctness: weight 0.6 is above 0.5"),
        ({"correctness": 0.5, "f1": 0.1, "format": 0.2}, "missing component(s) length"),
        ({"correctness": 0.4, "f1": 0.1, "format": 0.3, "length": 0.1}, "sum to 0.9"),
        ({"correctness": 0.5, "f1": 0.1, "format": 0.6, "length": -0.2}, "length: weight -0.2 is negative"),
        ({"correctness": 0.5, "f1": 0.1, "format": 0.2, "brevity": 0.2}, "unknown component 'brevity'"),
        ({"correctness": 0.5, "f1": 0.1, "format": 0.2, "length": "0.2"}, "must be a finite number"),
        ([0.5, 0.3, 0.2], "expected a JSON object"),
        ('{"correctness": 0.5,', "not valid JSON at line 1"),
    ],
)
def test_bad_weights_fail_the_check_and_refuse_to_load(tmp_path, content, message):
    path = _weights(tmp_path, content)
    result = weights_check(path, RULE_COMPONENTS)
    assert not result.passed and message in result.detail and result.detail.startswith(f"{path}: ")
    with pytest.raises(BadInput, match=f"^{path}: .*{message}".replace("(", r"\(").replace(")", r"\)")):
        load_weights(path, RULE_COMPONENTS)


def test_a_missing_weights_file_is_a_failed_check_not_an_exception(tmp_path):
    result = weights_check(tmp_path / "nope.json", RULE_COMPONENTS)
    assert not result.passed and result.detail == f"{tmp_path / 'nope.json'}: weights file not found"
    with pytest.raises(BadInput, match="nope.json: weights file not found"):
        load_weights(tmp_path / "nope.json", RULE_COMPONENTS)


# --- free disk ------------------------------------------------------------------------------------


def test_free_disk_measures_the_nearest_existing_parent(tmp_path):
    not_yet = tmp_path / "checkpoints" / "run" / "step_00001"
    result = free_disk(not_yet, 0.0)
    assert result.passed and result.measured["free_gb"] > 0 and str(tmp_path) in result.detail
    too_much = free_disk(not_yet, 1e9)
    assert not too_much.passed and too_much.thresholds == {"min_free_gb": 1e9, "need_gb": 1e9}
    # The rollout archive counts: a floor that fits fails once the archive's room is added to it.
    free = result.measured["free_gb"]
    archived = free_disk(not_yet, free / 2, archive_gb=free)
    assert free_disk(not_yet, free / 2).passed and not archived.passed and archived.measured["archive_gb"] == free


def test_the_archive_estimate_follows_what_is_kept():
    from rc1.config.loading import load_config
    from rc1.scoring.archive import archive_estimate_gb

    every = archive_estimate_gb(load_config("configs/rc1.yaml", ["rollouts.keep_text=all"]).config)
    tenth = archive_estimate_gb(load_config("configs/rc1.yaml").config)  # the production profile: every 10th step
    scores = archive_estimate_gb(load_config("configs/rc1.yaml", ["rollouts.keep_text=none"]).config)
    assert scores < tenth < every and 40 < every < 60 and tenth < 8  # 8,192-token replies: 6.8 and 49.7 GB
