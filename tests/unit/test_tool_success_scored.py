"""`tool_success` scored where live episodes are scored (rc1/scoring/pipeline.py): training's reward function reads it
from each rollout beside the other components, an evaluation's replies carry it, a live config's scorer names it and
its weights file may leave it out (weight 0: the reward is what it was); a one-turn reply never has it."""

import pytest
from conftest import REPO
from test_episode_outcome import Rollout

from rc1.config.loading import load_config
from rc1.config.recorded import recorded_overrides
from rc1.config.schema import RewardConfig
from rc1.core.catalog import RULE_COMPONENTS
from rc1.data.generators import generate
from rc1.scoring.pipeline import ScoringPipeline, components_for, evaluated_inputs, make_reward_fn
from rc1.scoring.rules import RuleScorer
from rc1.scoring.weights import load_weights
from rc1.train.metrics import EvalResult

RULE = RuleScorer(thinking=False, max_completion_tokens=64, overlong_cache=16)
SHIPPED = {"correctness": 0.5, "f1": 0.15, "format": 0.2, "length": 0.15}

RECORDED = recorded_overrides()  # configs/local.yaml as the tiny model runs it, recorded (rc1/config/recorded.py)


def _rollouts():
    item = generate("gsm8k", 1, 43, "outcome-gsm8k")[0]
    half = (
        Rollout(item)
        .said(calls=[("calc", {"expression": "2 * 3"})])
        .said(calls=[("calc", {"expression": "1 / 0"})])
        .said(f"Answer: {item.answer}")
    )
    none = Rollout(item).said(f"Answer: {item.answer}")
    return item, [half, none]


def _train(weights: dict[str, float]):
    item, rollouts = _rollouts()
    kept = []
    reward_fn = make_reward_fn(RewardConfig(), weights, ScoringPipeline(RULE), lambda *batch: kept.append(batch[3]))
    rewards = reward_fn(
        [item, item], [r.messages for r in rollouts], [8, 8], environments=[r.environment for r in rollouts]
    )
    return rewards, kept[0]


def test_training_scores_one_failed_call_of_two_as_tool_success_one_half():
    rewards, scored = _train({**SHIPPED, "tool_success": 0.0})
    assert [s.components["tool_success"] for s in scored] == [0.5, 1.0]
    assert {frozenset(s.components) for s in scored} == {frozenset({*RULE_COMPONENTS, "tool_success"})}
    assert rewards[0] == rewards[1]  # weight 0: the failed call costs nothing
    weighted, _ = _train({**SHIPPED, "correctness": 0.4, "tool_success": 0.1})
    assert weighted[1] - weighted[0] == pytest.approx(0.1 * 0.5)


def test_an_evaluation_of_live_episodes_carries_tool_success_and_a_one_turn_one_does_not():
    item, rollouts = _rollouts()
    outcomes = [r.outcome() for r in rollouts]
    replies = EvalResult(
        item_ids=[item.id, item.id],
        completions=[o.final_text for o in outcomes],
        completion_tokens=[8, 8],
        seconds=0.0,
        samples=2,
        outcomes=outcomes,
    )
    inputs = evaluated_inputs([item], replies)
    assert inputs.live == [{"tool_success": 0.5}, {"tool_success": 1.0}]
    scored = ScoringPipeline(RULE).score(
        inputs.items, inputs.texts, inputs.tokens, None, inputs.clarifications, inputs.live
    )
    assert [s.components["tool_success"] for s in scored] == [0.5, 1.0]
    one_turn = evaluated_inputs(
        [item], EvalResult(item_ids=[item.id], completions=["Answer: 1"], completion_tokens=[3], seconds=0.0, samples=1)
    )
    assert one_turn.live is None


def test_a_live_config_s_scorer_names_tool_success_and_the_shipped_weights_give_it_zero():
    recorded = load_config(REPO / "configs/local.yaml", RECORDED)
    live = load_config(REPO / "configs/local.yaml", [*RECORDED, "data.episodes=live", "monitors.drift=null"])
    assert components_for(recorded) == RULE_COMPONENTS
    assert components_for(live) == (*RULE_COMPONENTS, "tool_success")
    assert load_weights(live.weights_path, components_for(live)) == {**SHIPPED, "tool_success": 0.0}
    assert load_weights(recorded.weights_path, components_for(recorded)) == SHIPPED
