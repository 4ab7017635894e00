"""Live episodes wired into rc1's trl engine (issue 43): with `data.episodes: live` the engine builds conversational
rows with each item's id, the tool-calling tokenizer and TRL's `environment_factory`; two GRPO steps on the built-in
tiny model, each rollout scored by rc1's real scoring pipeline from its messages and its environment's transcript
(`make_reward_fn` → `live_inputs` → `episode_outcome`), every step recorded."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
import torch

from rc1.config.schema import Config
from rc1.data.episodes import dress
from rc1.data.generators import generate
from rc1.data.templates import load_pack
from rc1.scoring.pipeline import ScoringPipeline, make_reward_fn
from rc1.scoring.rules import RuleScorer
from rc1.train.engines import build_engine
from rc1.train.metrics import StepMetrics
from rc1.train.model_loading import load_policy
from rc1.train.tiny_model import build_tiny_qwen3

pytestmark = [pytest.mark.e2e, pytest.mark.filterwarnings("ignore:You are using 'environment_factory'")]

REPO = Path(__file__).resolve().parents[2]
STEPS = 2


def live_items():
    pack = load_pack(REPO / "configs" / "templates" / "pack_v2")
    raw = generate("hotpotqa", 4, 43, "live-hotpotqa") + generate("gsm8k", 4, 43, "live-gsm8k")
    return dress(
        raw,
        pack,
        seed=43,
        stream="pool",
        max_turns=3,
        max_tool_hops=2,
        clarify_rate=0.25,
        tools=["wiki", "calc"],
        episodes="live",
    )


def live_config() -> Config:
    raw = {
        "profile": "local",
        "run": {"name": "live", "seed": 5},
        "data": {"pool_size": 8, "shadow_size": 2, "episodes": "live", "max_tool_rounds": 2},
        "model": {"name": "builtin:tiny-qwen3", "lora": {"r": 4, "alpha": 8, "dropout": 0.05}},
        "train": {
            "max_steps": STEPS,
            "save_steps": STEPS,
            "learning_rate": 5e-3,
            "per_device_batch_size": 8,
            "num_generations": 4,
            "max_prompt_tokens": 512,
            "max_completion_tokens": 48,
        },
    }
    return msgspec.convert(raw, Config)


class Hooks:
    def __init__(self) -> None:
        self.steps: list[StepMetrics] = []
        self.staged: list[int] = []

    def on_step(self, metrics: StepMetrics):
        self.steps.append(metrics)

    def on_checkpoint(self, step: int, staged_dir: Path):
        self.staged.append(step)

    def close(self) -> None:
        pass


def test_two_live_grpo_steps_score_each_rollout_from_its_episode(tmp_path):
    items = live_items()
    assert any(item.needs_clarification for item in items)
    texts = [f"{item.prompt}\n{item.context}\nAnswer: {item.answer}" for item in items]
    model_dir = build_tiny_qwen3(texts, tmp_path / "tiny-qwen3", seed=3)
    config = live_config()
    model, tokenizer = load_policy(config.model, config.finetune.method, "cpu", torch.float32, model_dir)
    rule = RuleScorer(thinking=False, max_completion_tokens=48, overlong_cache=8)
    scored_batches = []
    reward_fn = make_reward_fn(
        config.reward,
        {name: 1.0 for name in rule.components},
        ScoringPipeline(rule),
        record=lambda its, completions, tokens, scored: scored_batches.append((list(its), list(completions), scored)),
    )
    engine = build_engine(config, items, reward_fn, model, tokenizer, tmp_path / "staging", "cpu")
    assert engine.live and engine.trainer.environment_factories
    assert engine.trainer.args.max_tool_calling_iterations == 2
    hooks = Hooks()
    engine.train(hooks, resume_from=None)

    assert [m.step for m in hooks.steps] == list(range(1, STEPS + 1)) and hooks.staged == [STEPS]
    assert len(scored_batches) == STEPS
    by_id = {item.id: item for item in items}
    for scored_items, finals, scored in scored_batches:
        assert len(scored_items) == len(finals) == len(scored) == 8
        for item, final in zip(scored_items, finals):
            assert not item.needs_clarification  # the clarification was the ask; the reply is checked
            assert item.question == by_id[item.id].question
            assert isinstance(final, str)  # the final reply's text, not TRL's message list
    assert all(isinstance(m.reward, float) for m in hooks.steps)

    # Evaluation runs the same tool loop (run_live_episodes) and hands the scorer each episode's final text.
    evaluated = engine.evaluate(items[:3], max_new_tokens=32)
    assert evaluated.item_ids == [item.id for item in items[:3]]
    assert all(isinstance(text, str) for text in evaluated.completions) and len(evaluated.completion_tokens) == 3
    assert engine.evaluate(items[:3], max_new_tokens=32).completions == evaluated.completions  # greedy: the same
