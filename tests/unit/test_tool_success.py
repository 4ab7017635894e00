"""A failed tool call as a reward component you can weight (issue 43): `tool_success` = 1 - the share of a live
episode's calls that failed (1.0 with no call), a live episode's component alone; the weights file may leave it out
(weight 0), so a recorded run's weights, components and rewards are what they were."""

import hashlib
import json

import pytest
from conftest import REPO
from test_episode_outcome import Rollout

from rc1.config.loading import load_config
from rc1.config.recorded import recorded_overrides
from rc1.config.schema import RewardConfig
from rc1.core.catalog import LIVE_COMPONENTS, RULE_COMPONENTS, TOOL_SUCCESS
from rc1.core.errors import BadInput
from rc1.data.generators import generate
from rc1.data.pool import build_shadow
from rc1.scoring.episode_outcome import live_components, tool_failure, tool_success
from rc1.scoring.pipeline import ScoringPipeline, components_for, make_reward_fn
from rc1.scoring.reward import weighted_sum
from rc1.scoring.rules import RuleScorer, gold_reply
from rc1.scoring.weights import load_weights, read_weights

SHIPPED = {"correctness": 0.5, "f1": 0.15, "format": 0.2, "length": 0.15}  # configs/weights.json
LIVE = RULE_COMPONENTS + LIVE_COMPONENTS

RECORDED = recorded_overrides()  # configs/local.yaml as the tiny model runs it, recorded (rc1/config/recorded.py)


@pytest.fixture(scope="module")
def gsm8k():
    return generate("gsm8k", 1, 43, "outcome-gsm8k")[0]


def test_one_failed_call_of_two_scores_tool_success_one_half(gsm8k):
    rollout = (
        Rollout(gsm8k)
        .said(calls=[("calc", {"expression": "2 * 3"})])
        .said(calls=[("calc", {"expression": "1 / 0"})])
        .said(f"Answer: {gsm8k.answer}")
    )
    episode = rollout.outcome()
    assert (episode.tool_calls, episode.failed_calls) == (2, 1)
    assert tool_failure(episode) == 0.5 and tool_success(episode) == 0.5
    assert live_components(episode) == {"tool_success": 0.5} and TOOL_SUCCESS in LIVE_COMPONENTS


def test_no_call_and_only_working_calls_score_full_tool_success(gsm8k):
    assert live_components(Rollout(gsm8k).said(f"Answer: {gsm8k.answer}").outcome()) == {"tool_success": 1.0}
    worked = Rollout(gsm8k).said(calls=[("calc", {"expression": "2 * 3"})]).said("Answer: 6").outcome()
    assert tool_success(worked) == 1.0
    refused = Rollout(gsm8k).said(calls=[("python", {"code": "1"})]).said("Answer: 1").outcome()  # TRL's refusal
    assert tool_success(refused) == 0.0


def test_the_shipped_weights_file_serves_a_live_scorer_unchanged_with_tool_success_at_weight_zero():
    path = REPO / "configs" / "weights.json"
    assert load_weights(path, RULE_COMPONENTS) == SHIPPED
    assert load_weights(path, LIVE) == {**SHIPPED, "tool_success": 0.0}  # left out: weight 0


def test_a_weights_file_may_weigh_tool_success_on_a_live_scorer_only(tmp_path):
    path = tmp_path / "weights.json"
    path.write_text(json.dumps({**SHIPPED, "correctness": 0.4, "tool_success": 0.1}))
    assert load_weights(path, LIVE)["tool_success"] == 0.1
    _, problems = read_weights(path, RULE_COMPONENTS)
    assert problems == [
        "unknown component 'tool_success'; this scorer's components are correctness, f1, format, length "
        "(tool_success is a live episode's: data.episodes live)"
    ]
    path.write_text(json.dumps({**SHIPPED, "tool_success": 0.1}))  # the sum is still held to 1
    with pytest.raises(BadInput, match="weights sum to 1.1, not 1"):
        load_weights(path, LIVE)


def test_tool_success_counts_where_weighted_and_given_and_nothing_else_may_differ():
    components = {"correctness": 1.0, "f1": 1.0, "format": 1.0, "length": 1.0}
    recorded = weighted_sum(components, SHIPPED)
    assert weighted_sum({**components, "tool_success": 0.5}, SHIPPED) == recorded  # weight 0: left out of the file
    weights = {**SHIPPED, "correctness": 0.4, "tool_success": 0.1}
    assert weighted_sum({**components, "tool_success": 0.5}, weights) == pytest.approx(0.95)
    assert weighted_sum(components, weights) == pytest.approx(0.9)  # a reply outside a live episode has none
    with pytest.raises(ValueError, match="they must match"):
        weighted_sum({**components, "judge": 1.0}, weights)
    with pytest.raises(ValueError, match="they must match"):
        weighted_sum({"correctness": 1.0}, weights)


def test_no_reward_function_may_take_the_live_component_s_name():
    with pytest.raises(BadInput, match=r"reward.functions\[0\].name: 'tool_success' is a built-in component's name"):
        load_config(
            REPO / "configs/local.yaml",
            [
                *RECORDED,
                "reward.functions=[{name: tool_success, path: 'trl.rewards:think_format_reward', weight: 0.1}]",
            ],
        )


# The rewards of 180 recorded replies (the gold reply, a wrong answer that asks back, no answer; per shadow item) under
# configs/local.yaml's scorer and weights file, computed at 99c74e1 (before tool_success): recorded scoring unchanged.
RECORDED_REWARDS_SHA256 = "e9cd63dde80c08c9b3c52c79fda60f0b507f7ab7a95d1469c5c71b75ccfabbe3"


def test_recorded_components_weights_and_rewards_are_what_they_were():
    loaded = load_config(REPO / "configs/local.yaml", RECORDED)
    assert components_for(loaded) == RULE_COMPONENTS
    weights = load_weights(loaded.weights_path, components_for(loaded))
    assert weights == SHIPPED
    items = build_shadow(60, {"hotpotqa": 0.45, "strategyqa": 0.30, "gsm8k": 0.25}, seed=4242)
    replies = (
        [gold_reply(i) for i in items] + [f"Which one? Answer: {i.answer}x" for i in items] + ["I am not sure."] * 60
    )
    rule = RuleScorer(thinking=False, max_completion_tokens=64, overlong_cache=16)
    pipeline = ScoringPipeline(rule)
    rewards = make_reward_fn(RewardConfig(difficulty_beta=0.2), weights, pipeline)(
        items * 3, replies, [len(r.split()) * 7 for r in replies]
    )
    assert hashlib.sha256(json.dumps([repr(r) for r in rewards]).encode()).hexdigest() == RECORDED_REWARDS_SHA256
    scored = pipeline.score(items, replies[:60], [4] * 60)
    assert {frozenset(s.components) for s in scored} == {frozenset(RULE_COMPONENTS)}
