"""The shuffled-gold control arm (`reward.answers: shuffled`): training rewards computed against another item's
gold of the same task, a fixed derangement; refused by the production profile."""

import pytest
from conftest import REPO

from rc1.app.checks import PRODUCTION_FLOORS
from rc1.checks.consistency import training_config_check
from rc1.config.loading import load_config
from rc1.data.generators import generate
from rc1.scoring.control import ShuffledAnswers, with_shuffled_answers

POOL = generate("hotpotqa", 40, 3, "hotpotqa") + generate("strategyqa", 30, 3, "strategyqa")


def test_every_pool_item_is_scored_against_another_items_gold_of_its_own_task():
    shuffle = ShuffledAnswers(POOL, seed=1)
    shuffled = [shuffle(item) for item in POOL]
    by_task = {task: sorted(item.answer for item in POOL if item.task == task) for task in ("hotpotqa", "strategyqa")}
    for task, answers in by_task.items():  # a permutation of the task's own answers
        assert sorted(s.answer for s in shuffled if s.task == task) == answers
    hotpot = [(item.answer, s.answer) for item, s in zip(POOL, shuffled) if item.task == "hotpotqa"]
    assert sum(a != b for a, b in hotpot) >= 35  # names are nearly all distinct: almost every item loses its gold
    assert [shuffle(item).answer for item in POOL] == [s.answer for s in shuffled]  # fixed
    assert [ShuffledAnswers(POOL, seed=2)(item).answer for item in POOL] != [s.answer for s in shuffled]


def test_an_item_outside_the_pool_takes_a_pool_answer_of_its_task():
    shuffle = ShuffledAnswers(POOL, seed=1)
    fresh = generate("strategyqa", 5, 3, "fresh-7-0-strategyqa")
    assert all(shuffle(item).answer in {"yes", "no"} for item in fresh)
    assert shuffle(generate("gsm8k", 1, 3, "gsm8k")[0]).answer  # a task the pool lacks keeps its own


def test_the_reward_function_sees_the_shuffled_gold():
    seen, contexts = [], []

    def scored(items, texts, tokens, context=None):
        seen.extend(i.answer for i in items)
        contexts.append(context)
        return [0.0] * len(items)

    reward = with_shuffled_answers(scored, POOL, seed=1)
    reward(POOL[:3], ["a", "b", "c"], [1, 1, 1], "the batch's context")  # as the engines call it
    assert seen == [ShuffledAnswers(POOL, seed=1)(item).answer for item in POOL[:3]]
    assert contexts == ["the batch's context"]


def test_the_production_profile_refuses_the_control_arm():
    loaded = load_config(REPO / "configs/rc1.yaml", ["reward.answers=shuffled"])
    result = training_config_check(loaded.config, PRODUCTION_FLOORS)
    assert not result.passed and "reward.answers must be gold" in result.detail
    assert training_config_check(
        load_config(REPO / "configs/local.yaml", ["reward.answers=shuffled"]).config, PRODUCTION_FLOORS
    ).passed


@pytest.mark.parametrize("weights", ["weights.json", "weights_format_only.json"])
def test_the_shipped_weight_files_are_valid(weights):
    from rc1.checks.weights import weights_check
    from rc1.scoring.rules import RULE_COMPONENTS

    assert weights_check(REPO / "configs" / weights, RULE_COMPONENTS).passed


def test_a_live_rollout_keeps_its_environment_under_the_control_arm():
    """A live episode's reward reads its environment's transcript; the control arm moves only the gold."""
    handed = []

    def scored(items, texts, tokens, context=None, environments=None):
        handed.append(environments)
        return [0.0] * len(items)

    reward = with_shuffled_answers(scored, POOL, seed=1)
    reward(POOL[:2], [[], []], [1, 1], None, environments=["env 0", "env 1"])  # as the live reward function is called
    assert handed == [["env 0", "env 1"]]
