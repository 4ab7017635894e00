"""Rule scorer and reward on completions shaped like a thinking model's: what the user sees, what counts
as correct, well-formed and not overlong, and how the reward adds up."""

import json
import string
from collections import Counter

import pytest
from conftest import SHARED

from rc1.checks.overclar import overclar_check
from rc1.config.schema import RewardConfig
from rc1.data.generators import render_prompt
from rc1.data.pool import build_shadow
from rc1.data.task import TaskItem
from rc1.scoring.answers import final_answer, normalize_answer, token_f1
from rc1.scoring.pipeline import ScoringPipeline, make_reward_fn
from rc1.scoring.reward import difficulty_factor, overclar_penalty, total_reward
from rc1.scoring.rules import RuleScorer, clarification_count
from rc1.scoring.thinking import split_reply, template_opens_thinking
from rc1.train.tiny_model import CHAT_TEMPLATE

WEIGHTS = {"correctness": 0.5, "f1": 0.15, "format": 0.2, "length": 0.15}
# Qwen3-4B-Thinking-2507's budget: 2048 completion tokens, the last 512 the soft overlong zone.
THINKING = RuleScorer(thinking=True, max_completion_tokens=2048, overlong_cache=512)
PLAIN = RuleScorer(thinking=False, max_completion_tokens=2048, overlong_cache=512)
# The end of Qwen3-Thinking's template: the generation prompt opens the thinking.
THINKING_TEMPLATE = (
    "{%- for m in messages %}{{ '<|im_start|>' + m.role + '\\n' + m.content + '<|im_end|>\\n' }}{%- endfor %}"
    "{%- if add_generation_prompt %}{{ '<|im_start|>assistant\\n<think>\\n' }}{%- endif %}"
)


def _item(task: str, answer: str, difficulty: str = "medium", needs_clarification: bool = False) -> TaskItem:
    return TaskItem(
        id=f"{task}-000000",
        task=task,
        question="q?",
        answer=answer,
        difficulty=difficulty,
        prompt=render_prompt("q?"),
        needs_clarification=needs_clarification,
    )


# --- what the user sees ---------------------------------------------------------------------------


def test_the_chat_template_says_whether_completions_start_inside_the_thinking():
    assert template_opens_thinking(THINKING_TEMPLATE)
    assert not template_opens_thinking(CHAT_TEMPLATE)
    assert not template_opens_thinking(None)


def test_the_visible_reply_is_what_follows_the_last_closing_tag():
    assert split_reply("16 - 3 = 13 </think>\n\nAnswer: 13", thinking=True).visible == "Answer: 13"
    assert split_reply("a </think> b </think> c", thinking=True).visible == "c"
    cut_off = split_reply("Is it 16 minus 3? Is that right? Let me", thinking=True)
    assert cut_off.visible is None and not cut_off.closed
    assert split_reply("Answer: 13", thinking=False).visible == "Answer: 13"
    assert split_reply("Sure. <think> hmm, is it", thinking=False).visible == "Sure."


# --- final answers --------------------------------------------------------------------------------


def test_the_final_answer_is_the_last_marker_of_any_kind():
    assert final_answer("Answer: 3\nthinking again...\nAnswer: 4").text == "4"
    assert final_answer("Answer: 3\nSo \\boxed{5}.").text == "5"
    assert final_answer("\\boxed{5}\n#### 6").text == "6"
    assert final_answer("#### 6\nAnswer: 7").text == "7"
    assert final_answer("\\boxed{\\frac{1}{2}} or \\boxed{\\text{yes}}").text == "yes"
    assert final_answer("**Answer:** Ostrel River").text == "Ostrel River"
    assert final_answer("The answer is 4.") is None
    assert final_answer("So the final Answer: 4") is None  # not a line of its own
    assert final_answer("Answer:   \n\\boxed{}") is None


@pytest.mark.parametrize(
    "visible, correct",
    [
        ("Answer: 1234", 1),
        ("Answer: 1,234", 1),
        ("Answer: $1,234", 1),
        ("Answer: 1234.0", 1),
        ("Answer: 1234.00 marbles", 1),
        ("The total is \\boxed{1234}.", 1),
        ("#### 1234", 1),
        ("\\boxed{1,234}", 1),
        ("Answer: 1233", 0),
        ("Answer: 12340", 0),
        ("Answer: -1234", 0),
        ("Answer: about a thousand", 0),
        ("1234", 0),
    ],
)
def test_gsm8k_correctness_is_math_equivalence_of_the_final_answer(visible, correct):
    assert PLAIN.score(_item("gsm8k", "1234"), visible, 20)["correctness"] == correct


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/data is not present")
def test_every_official_gsm8k_gold_solution_scores_correct_in_each_answer_format():
    lines = (SHARED / "gsm8k" / "test.jsonl").read_text().splitlines()
    golds = [json.loads(line)["answer"].split("####")[-1].strip() for line in lines]
    assert len(golds) == 1319
    for gold in golds:
        item = _item("gsm8k", gold)
        for visible in (f"The answer is \\boxed{{{gold}}}.", f"#### {gold}", f"Answer: {gold}"):
            completion = f"Adding it up step by step.\n</think>\n\n{visible}"
            assert THINKING.score(item, completion, 300)["correctness"] == 1, (gold, visible)


def _official_f1(prediction: str, ground_truth: str) -> float:
    """hotpot_evaluate_v1.py's f1_score, written out from its definition."""

    def normalize(s):
        s = "".join(ch for ch in s.lower() if ch not in set(string.punctuation))
        s = " ".join(w for w in s.split() if w not in ("a", "an", "the"))
        return " ".join(s.split())

    p, g = normalize(prediction), normalize(ground_truth)
    if p in ("yes", "no", "noanswer") and p != g:
        return 0.0
    if g in ("yes", "no", "noanswer") and p != g:
        return 0.0
    common = Counter(p.split()) & Counter(g.split())
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = same / len(p.split()), same / len(g.split())
    return 2 * precision * recall / (precision + recall)


@pytest.mark.parametrize(
    "prediction, gold",
    [
        ("the Ostrel river", "Ostrel"),
        ("Ostrel", "Ostrel River"),
        ("Dorvel Anskip", "dorvel  anskip"),
        ("yes", "no"),
        ("yes it is", "yes"),
        ("yes", "yes"),
        ("noanswer", "Ostrel"),
        ("Varn and Ostrel", "Ostrel, Varn"),
        ("Tesmor", "Korvenford"),
        ("An Ostrel.", "the ostrel"),
    ],
)
def test_hotpotqa_f1_and_exact_match_follow_the_official_evaluation(prediction, gold):
    scored = PLAIN.score(_item("hotpotqa", gold), f"Answer: {prediction}", 10)
    assert scored["f1"] == pytest.approx(_official_f1(prediction, gold))
    assert token_f1(prediction, gold) == pytest.approx(_official_f1(prediction, gold))
    assert scored["correctness"] == float(normalize_answer(prediction) == normalize_answer(gold))


@pytest.mark.parametrize(
    "visible, gold, correct",
    [
        ("Answer: yes", "yes", 1),
        ("Answer: Yes.", "yes", 1),
        ("Answer: true", "yes", 1),
        ("Answer: False", "no", 1),
        ("Answer: no", "yes", 0),
        ("Answer: yes, because the lake freezes", "yes", 1),
        ("Answer: maybe", "no", 0),
        ("\\boxed{\\text{no}}", "False", 1),
    ],
)
def test_strategyqa_correctness_is_a_yes_no_match(visible, gold, correct):
    scored = PLAIN.score(_item("strategyqa", gold), visible, 10)
    assert scored["correctness"] == correct and scored["f1"] == correct


def test_every_gold_answer_of_the_shadow_set_scores_correct_and_a_wrong_one_does_not():
    for item in build_shadow(60, {"hotpotqa": 0.45, "strategyqa": 0.30, "gsm8k": 0.25}, seed=4242):
        assert THINKING.score(item, f"Thinking.\n</think>\nAnswer: {item.answer}", 40)["correctness"] == 1, item.id
        wrong = {"yes": "no", "no": "yes"}.get(item.answer, item.answer + "1")
        assert THINKING.score(item, f"Thinking.\n</think>\nAnswer: {wrong}", 40)["correctness"] == 0, item.id


# --- thinking-model shapes ------------------------------------------------------------------------


def test_a_closed_thinking_with_a_final_answer_scores_on_every_component():
    completion = "16 - 3 = 13, and 13 + 5 = 18.\n</think>\n\nThe farmer has 18 cows.\nAnswer: 18"
    assert THINKING.score(_item("gsm8k", "18"), completion, 400) == {
        "correctness": 1,
        "f1": 1,
        "format": 1,
        "length": 1,
    }


def test_a_cut_off_completion_has_no_reply_asks_nothing_and_is_overlong():
    completion = "Is it 16 minus 3? Wait, is that right? Maybe 18? Let me recount the"
    scored = THINKING.score(_item("gsm8k", "18"), completion, 2048)
    assert scored == {"correctness": 0, "f1": 0, "format": 0, "length": 0}
    assert clarification_count(THINKING.reply(completion).visible) == 0


def test_an_answer_only_inside_the_thinking_is_not_the_answer():
    completion = "Answer: 18 seems right.\n</think>\n\nI am not sure."
    scored = THINKING.score(_item("gsm8k", "18"), completion, 60)
    assert scored["correctness"] == 0 and scored["format"] == 0


def test_format_needs_one_closed_thinking_and_a_reply_that_ends_on_its_answer():
    item = _item("gsm8k", "7")
    assert THINKING.score(item, "3 + 4 = 7\n</think>\n\\boxed{7}", 12)["format"] == 1
    assert THINKING.score(item, "3 + 4</think>\nAnswer: 7\nLet me double-check that.", 12)["format"] == 0
    assert THINKING.score(item, "a</think>b<think>c</think>\nAnswer: 7", 12)["format"] == 0  # a second block
    assert PLAIN.score(item, "3 + 4 = 7\nAnswer: 7\n\n", 12)["format"] == 1
    assert PLAIN.score(item, "It is 7.", 12)["format"] == 0


@pytest.mark.parametrize("tokens, length", [(0, 1.0), (1536, 1.0), (1792, 0.5), (2048, 0.0), (3000, 0.0)])
def test_length_is_the_dapo_soft_overlong_penalty_over_completion_tokens(tokens, length):
    assert THINKING.score(_item("gsm8k", "7"), "x</think>Answer: 7", tokens)["length"] == pytest.approx(length)


def test_an_underspecified_item_is_answered_by_one_visible_question():
    unclear = _item("hotpotqa", "Ostrel", needs_clarification=True)
    asked = THINKING.score(unclear, "Which river is meant?</think>\nWhich town do you mean?", 20)
    assert asked["correctness"] == 1 and asked["format"] == 1
    assert THINKING.score(unclear, "Which town do you mean?", 20)["correctness"] == 0  # only thought, never asked
    assert THINKING.score(unclear, "x</think>\nAnswer: Ostrel", 20)["correctness"] == 0


# --- reward ---------------------------------------------------------------------------------------


def test_clarification_count_counts_questions_asked_back_in_the_visible_reply():
    assert clarification_count("Answer: 7") == 0
    assert clarification_count("Do you mean apples? Or pears?\nAnswer: 7") == 2
    assert clarification_count("Which town (Korvenford or Tesmor)?") == 1
    assert clarification_count("Is it 5?? Hmm. Really?!") == 1
    assert clarification_count(None) == 0
    assert clarification_count("? ?") == 0
    assert clarification_count(split_reply("Wait, is 12 right? Yes.</think>\nAnswer: 12", True).visible) == 0


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
    completion = "Hmm?</think>\nDid you mean seven? Or eight?\nAnswer: 7"
    scored = ScoringPipeline(THINKING).score([item], [completion], [1792])[0]
    assert scored.clarifications == 2
    weighted = 0.5 * 1 + 0.15 * 1 + 0.2 * 1 + 0.15 * 0.5
    kw = dict(use_penalty=True, alpha=0.07, cap=3)
    assert total_reward(scored.components, WEIGHTS, item, 2, **kw, beta=0.0) == pytest.approx(weighted - 0.14)
    assert total_reward(scored.components, WEIGHTS, item, 2, **kw, beta=0.5) == pytest.approx((weighted - 0.14) * 1.5)
    assert total_reward(scored.components, WEIGHTS, item, 2, **dict(kw, use_penalty=False), beta=0.0) == pytest.approx(
        weighted
    )
    asked = _item("gsm8k", "7", difficulty="hard", needs_clarification=True)
    assert total_reward(scored.components, WEIGHTS, asked, 2, **kw, beta=0.0) == pytest.approx(
        weighted
    )  # asking is right here


def test_weights_must_cover_exactly_the_scorer_components():
    item = _item("gsm8k", "7")
    components = PLAIN.score(item, "Answer: 7", 3)
    with pytest.raises(ValueError, match="must match"):
        total_reward(
            components, {"correctness": 0.6, "format": 0.4}, item, 0, use_penalty=False, alpha=0.0, cap=0, beta=0.0
        )
    with pytest.raises(ValueError, match="must match"):
        total_reward(components, {**WEIGHTS, "judge": 0.0}, item, 0, use_penalty=False, alpha=0.0, cap=0, beta=0.0)


def test_the_reward_the_trainer_gets_uses_the_token_counts_it_is_given():
    reward_fn = make_reward_fn(RewardConfig(), WEIGHTS, ScoringPipeline(THINKING))
    item = _item("gsm8k", "18")
    short, cut = reward_fn([item, item], ["x</think>\nAnswer: 18"] * 2, [100, 2048])
    assert short == pytest.approx(1.0) and cut == pytest.approx(0.85)


# --- the round-1 check over the aggregation -------------------------------------------------------


@pytest.mark.parametrize("rule", [PLAIN, THINKING], ids=["thinking off", "thinking on"])
def test_the_overclar_check_probes_the_aggregation_and_passes_with_the_issue_values(rule):
    result = overclar_check(
        RewardConfig(use_overclar_penalty=True, overclar_alpha=0.07, overclar_cap=3), ScoringPipeline(rule)
    )
    assert result.passed, result.detail
    assert [result.measured[f"penalty_c{c}"] for c in (0, 1, 2, 5)] == pytest.approx([0.0, 0.07, 0.14, 0.21])
    assert result.measured["penalty_needed_clarification"] == 0.0


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"use_overclar_penalty": False}, "reward.use_overclar_penalty is false"),
        ({"overclar_alpha": 0.0}, "switch the penalty off"),
        ({"overclar_cap": 0}, "switch the penalty off"),
    ],
)
def test_the_overclar_check_fails_when_the_penalty_is_off(changes, message):
    result = overclar_check(RewardConfig(**changes), ScoringPipeline(PLAIN))
    assert not result.passed and message in result.detail


def test_the_overclar_check_fails_when_the_trainers_reward_is_not_built_from_the_checked_config():
    def miswired(_config, weights, pipeline):  # alpha and cap swapped on the way to the trainer
        return make_reward_fn(RewardConfig(overclar_alpha=3.0, overclar_cap=0), weights, pipeline)

    result = overclar_check(RewardConfig(), ScoringPipeline(PLAIN), build=miswired)
    assert not result.passed and "c = 1: penalty 0, expected 0.07" in result.detail
