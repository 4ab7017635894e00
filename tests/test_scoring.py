"""Rule scorer and reward: what counts as correct, well-formed and brief, and how the reward adds up."""

import pytest

from rc1.checks.overclar import overclar_check
from rc1.config import RewardConfig
from rc1.data.generators import render_prompt
from rc1.data.pool import build_shadow
from rc1.data.task import TaskItem
from rc1.scoring.reward import clarification_count, difficulty_factor, overclar_penalty, total_reward
from rc1.scoring.rules import extract_answer, normalize_answer, score
from rc1.train.rewards import make_reward_fn

WEIGHTS = {"correctness": 0.5, "format": 0.3, "brevity": 0.2}


def _item(task: str, answer: str, difficulty: str = "medium", needs_clarification: bool = False) -> TaskItem:
    return TaskItem(id=f"{task}-000000", task=task, question="q?", answer=answer, difficulty=difficulty,
                    prompt=render_prompt("q?"), needs_clarification=needs_clarification)


def test_the_answer_is_the_last_answer_line():
    assert extract_answer("Answer: 3\nthinking again...\nAnswer: 4") == "4"
    assert extract_answer("**Answer:** Ostrel River") == "Ostrel River"
    assert extract_answer("> answer : `yes`") == "yes"
    assert extract_answer("The answer is 4.") is None
    assert extract_answer("So the final Answer: 4") is None  # not a line of its own
    assert extract_answer("Answer:   ") is None


@pytest.mark.parametrize("completion, correct", [
    ("Answer: 1234", 1), ("Answer: 1,234", 1), ("Answer: $1,234", 1), ("Answer: 1234.0", 1),
    ("Answer: 1234.00 marbles", 1), ("Answer: 1234.", 1), ("Answer: 1233", 0), ("Answer: 12340", 0),
    ("Answer: -1234", 0), ("Answer: about a thousand", 0), ("1234", 0),
])
def test_gsm8k_correctness_is_a_numeric_match(completion, correct):
    assert score(_item("gsm8k", "1234"), completion)["correctness"] == correct


def test_hotpotqa_uses_the_official_normalization_and_exact_match():
    assert normalize_answer("  The  Ostrel-river, (north)! ") == "ostrelriver north"
    item = _item("hotpotqa", "Ostrel")
    for good in ("Answer: Ostrel", "Answer: the Ostrel.", "Answer: OSTREL", "Answer: An Ostrel"):
        assert score(item, good)["correctness"] == 1, good
    for bad in ("Answer: Ostrel River", "Answer: Ostrell", "Answer: Ostrel or Varn"):
        assert score(item, bad)["correctness"] == 0, bad
    assert score(_item("hotpotqa", "Dorvel Anskip"), "Answer: dorvel  anskip")["correctness"] == 1


@pytest.mark.parametrize("completion, gold, correct", [
    ("Answer: yes", "yes", 1), ("Answer: Yes.", "yes", 1), ("Answer: true", "yes", 1), ("Answer: False", "no", 1),
    ("Answer: no", "yes", 0), ("Answer: yes, because the lake freezes", "yes", 1), ("Answer: maybe", "no", 0),
    ("Answer: yes", "True", 1),
])
def test_strategyqa_correctness_is_a_yes_no_match(completion, gold, correct):
    assert score(_item("strategyqa", gold), completion)["correctness"] == correct


def test_format_needs_a_final_answer_line_and_brevity_falls_with_length():
    item = _item("gsm8k", "7")
    assert score(item, "3 + 4 = 7\nAnswer: 7")["format"] == 1
    assert score(item, "Answer: 7\nLet me double-check that.")["format"] == 0
    assert score(item, "Answer: 7\nLet me double-check that.")["correctness"] == 1
    assert score(item, "It is 7.")["format"] == 0
    assert score(item, "")["brevity"] == 1.0
    assert score(item, "x" * 200)["brevity"] == pytest.approx(0.5)
    assert score(item, "x" * 100, max_completion_chars=200)["brevity"] == pytest.approx(0.5)
    assert score(item, "x" * 900)["brevity"] == 0.0
    assert all(0 <= v <= 1 for v in score(item, "Answer: 7").values())


def test_every_gold_answer_of_the_shadow_set_scores_correct_and_a_wrong_one_does_not():
    for item in build_shadow(60, {"hotpotqa": 0.45, "strategyqa": 0.30, "gsm8k": 0.25}, seed=4242):
        assert score(item, f"Thinking.\nAnswer: {item.answer}")["correctness"] == 1, item.id
        wrong = {"yes": "no", "no": "yes"}.get(item.answer, item.answer + "1")
        assert score(item, f"Answer: {wrong}")["correctness"] == 0, item.id


# --- reward ---------------------------------------------------------------------------------------

def test_clarification_count_counts_questions_asked_back_not_those_in_the_thinking():
    assert clarification_count("Answer: 7") == 0
    assert clarification_count("Do you mean apples? Or pears?\nAnswer: 7") == 2
    assert clarification_count("Which town (Korvenford or Tesmor)?") == 1
    assert clarification_count("Is it 5?? Hmm. Really?!") == 1
    assert clarification_count("Wait, is 12 right? Yes.</think>\nAnswer: 12") == 0
    assert clarification_count("Hmm?</think>Did you mean the river?") == 1
    assert clarification_count("? ?") == 0


@pytest.mark.parametrize("c, expected", [(0, 0.0), (1, 0.07), (2, 0.14), (5, 0.21)])
def test_the_overclarification_penalty_grows_with_questions_up_to_the_cap(c, expected):
    assert overclar_penalty(c, needs_clarification=False, alpha=0.07, cap=3) == pytest.approx(expected)
    assert overclar_penalty(c, needs_clarification=True, alpha=0.07, cap=3) == 0.0


def test_the_difficulty_factor_rewards_hard_items_more_and_easy_ones_less():
    assert [difficulty_factor(d, 0.2) for d in ("easy", "medium", "hard")] == [0.8, 1.0, 1.2]
    assert difficulty_factor("hard", 0.0) == 1.0
    with pytest.raises(ValueError, match="unknown difficulty 'extreme'"):
        difficulty_factor("extreme", 0.2)


def test_total_reward_is_weighted_components_minus_penalty_times_the_factor():
    item = _item("gsm8k", "7", difficulty="hard")
    completion = "Did you mean seven? Or eight?\nAnswer: 7"
    components = score(item, completion)
    weighted = 0.5 * 1 + 0.3 * 1 + 0.2 * (1 - len(completion) / 400)
    kw = dict(use_penalty=True, alpha=0.07, cap=3)
    assert total_reward(components, WEIGHTS, item, completion, **kw, beta=0.0) == pytest.approx(weighted - 0.14)
    assert total_reward(components, WEIGHTS, item, completion, **kw, beta=0.5) == pytest.approx((weighted - 0.14) * 1.5)
    no_penalty = dict(kw, use_penalty=False)
    assert total_reward(components, WEIGHTS, item, completion, **no_penalty, beta=0.0) == pytest.approx(weighted)
    asked = _item("gsm8k", "7", difficulty="hard", needs_clarification=True)
    assert total_reward(components, WEIGHTS, asked, completion, **kw, beta=0.0) == pytest.approx(weighted)


def test_weights_must_cover_exactly_the_scorer_components():
    item = _item("gsm8k", "7")
    components = score(item, "Answer: 7")
    with pytest.raises(ValueError, match="must match"):
        total_reward(components, {"correctness": 0.6, "format": 0.4}, item, "Answer: 7",
                     use_penalty=False, alpha=0.0, cap=0, beta=0.0)
    with pytest.raises(ValueError, match="must match"):
        total_reward(components, {**WEIGHTS, "length": 0.0}, item, "Answer: 7",
                     use_penalty=False, alpha=0.0, cap=0, beta=0.0)


# --- the round-1 check over the aggregation -------------------------------------------------------

def test_the_overclar_check_probes_the_aggregation_and_passes_with_the_issue_values():
    result = overclar_check(RewardConfig(use_overclar_penalty=True, overclar_alpha=0.07, overclar_cap=3))
    assert result.passed, result.detail
    assert [result.measured[f"penalty_c{c}"] for c in (0, 1, 2, 5)] == pytest.approx([0.0, 0.07, 0.14, 0.21])
    assert result.measured["penalty_needed_clarification"] == 0.0


@pytest.mark.parametrize("changes, message", [
    ({"use_overclar_penalty": False}, "reward.use_overclar_penalty is false"),
    ({"overclar_alpha": 0.0}, "switch the penalty off"),
    ({"overclar_cap": 0}, "switch the penalty off"),
])
def test_the_overclar_check_fails_when_the_penalty_is_off(changes, message):
    result = overclar_check(RewardConfig(**changes))
    assert not result.passed and message in result.detail


def test_the_overclar_check_fails_when_the_trainers_reward_is_not_built_from_the_checked_config():
    def miswired(_config, weights):  # alpha and cap swapped on the way to the trainer
        return make_reward_fn(RewardConfig(overclar_alpha=3.0, overclar_cap=0), weights)

    result = overclar_check(RewardConfig(), build=miswired)
    assert not result.passed and "c = 1: penalty 0, expected 0.07" in result.detail
