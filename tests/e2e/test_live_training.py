"""Live episodes wired into rc1's trl engine (issue 43): with `data.episodes: live` the engine builds conversational
rows with each item's id, the tool-calling tokenizer and TRL's `environment_factory`; two GRPO steps on the built-in
tiny model, each rollout scored by rc1's real scoring pipeline from its messages and its environment's transcript
(`make_reward_fn` → `live_inputs` → `episode_outcome`), every step recorded, and archived with its episode by the
run's `RolloutRecorder`: `audit --rescore`'s row check runs the archived calls again and finds an edited result.

Each rollout's first turn is scripted (the first call of its item's gold path, as tests/e2e/test_live_tools_trl.py
scripts one through TRL's `_generate_single_turn`): the randomly initialised model never writes a tool call itself.
TRL's parser and tool loop, and every later turn, are the real ones."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
import torch
import zstandard
from live_episodes import call, dressed

from rc1.app.rescore import _rescore_rows
from rc1.app.rollouts import RolloutRecorder
from rc1.config.loading import LoadedConfig
from rc1.config.schema import Config
from rc1.config.sections.data import ToolOfYoursConfig
from rc1.data.environment import PARAMETERS
from rc1.data.generators import generate
from rc1.data.gold_trajectory import gold_calls
from rc1.data.user_tools import ToolOfYoursFailed, load_tools
from rc1.scoring.archive import decode_shard
from rc1.scoring.episode_record import Episode
from rc1.scoring.episode_replay import replay_calls
from rc1.scoring.pipeline import ScoringPipeline, components_for, make_reward_fn, rule_scorer
from rc1.scoring.weights import load_weights
from rc1.train.engines import build_engine
from rc1.train.metrics import StepMetrics
from rc1.train.model_loading import load_policy
from rc1.train.tiny_model import build_tiny_qwen3

pytestmark = [pytest.mark.e2e, pytest.mark.filterwarnings("ignore:You are using 'environment_factory'")]

REPO = Path(__file__).resolve().parents[2]
STEPS = 2


def live_items():
    return dressed(generate("hotpotqa", 4, 43, "live-hotpotqa") + generate("gsm8k", 4, 43, "live-gsm8k"), rate=0.25)


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
            "max_completion_tokens": 160,  # a scripted call (~55 tokens) and, where it is short, its result
        },
    }
    return msgspec.convert(raw, Config)


class Hooks:
    """What the run's hooks do with the archive: close each step's rows, take the shard at the checkpoint."""

    def __init__(self, recorder: RolloutRecorder) -> None:
        self.recorder = recorder
        self.steps: list[StepMetrics] = []
        self.staged: list[int] = []
        self.shards: list[bytes] = []

    def on_step(self, metrics: StepMetrics):
        self.recorder.close_step(metrics.step, metrics.advantages)
        self.steps.append(metrics)

    def on_checkpoint(self, step: int, staged_dir: Path):
        self.staged.append(step)
        self.shards.append(self.recorder.take_shard())

    def close(self) -> None:
        pass


def gold_first_call(environment) -> str:
    """The first call of the environment's item's gold path (an ask on an unclear item, else a wiki or calc)."""
    first = gold_calls(environment.item)[0]
    return call(first.tool, PARAMETERS[first.tool], first.arguments[PARAMETERS[first.tool]])


def script_first_turns(trainer, first_turn=gold_first_call) -> None:
    """Each rollout's first turn is `first_turn(its environment)`; every later turn is the model's own."""
    own = trainer._generate_single_turn

    def first_turn_scripted(prompt_ids, images, multimodal_fields, num_generations, has_tool_images=False):
        if num_generations == 1:  # a turn after tool results: the model's own
            return own(prompt_ids, images, multimodal_fields, num_generations, has_tool_images)
        turns = [first_turn(env) for env in trainer.environments]
        return [trainer.processing_class.encode(t, add_special_tokens=False) for t in turns], None

    trainer._generate_single_turn = first_turn_scripted


def edited(shard: bytes, line: int, result: str) -> tuple[list, dict]:
    """The shard's rows with call 0's result of row `line` edited in the archive's JSON (the transcript's and the tool
    message's the model read), and that row's JSON as edited."""
    lines = zstandard.ZstdDecompressor().decompress(shard).decode().splitlines()
    row = json.loads(lines[line])
    old = row["episode"]["calls"][0]["result"]
    row["episode"]["calls"][0]["result"] = result
    for message in row["episode"]["messages"]:
        if message["role"] == "tool" and message.get("content") == old:
            message["content"] = result
    lines[line] = json.dumps(row)
    return decode_shard(zstandard.ZstdCompressor().compress(("\n".join(lines) + "\n").encode())), row


def test_two_live_grpo_steps_score_each_rollout_from_its_episode(tmp_path):
    items = live_items()
    assert any(item.needs_clarification for item in items)
    texts = [f"{item.prompt}\n{item.context}\nAnswer: {item.answer}" for item in items]
    model_dir = build_tiny_qwen3(texts, tmp_path / "tiny-qwen3", seed=3)
    config = live_config()
    loaded = LoadedConfig(config=config, path=REPO / "configs" / "live.yaml", overrides=(), sha256="")
    model, tokenizer = load_policy(config.model, config.finetune.method, "cpu", torch.float32, model_dir)
    weights = load_weights(loaded.weights_path, components_for(loaded))
    recorder = RolloutRecorder(config, weights)
    scored_batches = []

    def record(its, completions, tokens, scored, episodes):
        scored_batches.append((list(its), list(completions), scored))
        recorder.record(its, completions, tokens, scored, episodes)

    reward_fn = make_reward_fn(config.reward, weights, ScoringPipeline(rule_scorer(loaded, thinking=False)), record)
    engine = build_engine(config, items, reward_fn, model, tokenizer, tmp_path / "staging", "cpu")
    assert engine.live and engine.trainer.environment_factories
    assert engine.trainer.args.max_tool_calling_iterations == 2
    script_first_turns(engine.trainer)
    hooks = Hooks(recorder)
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

    # The archive: every rollout with its episode, every first call run (the scripted gold call); each row's calls
    # run again on its item give back what was recorded, and its reward read again from its episode is the one the
    # trainer used. An edited tool result is a finding naming the step, the item, the call and the tool.
    (shard,) = hooks.shards
    rows = decode_shard(shard)
    assert len(rows) == STEPS * 8 and all(isinstance(row.episode, Episode) for row in rows)
    assert all(
        row.episode.calls and row.episode.calls[0].tool == gold_calls(by_id[row.item_id])[0].tool for row in rows
    )
    assert _rescore_rows(loaded, [(1, row) for row in rows], by_id) == ([], len(rows), 0)
    # rows whose first call worked and whose result the model read (the others' results were rolled back at the budget)
    read = [i for i, row in enumerate(rows) if row.episode.calls[0].ok and len(row.episode.messages) > 1]
    assert read
    tampered, row = edited(shard, read[0], "The answer is 42.")
    (finding,) = _rescore_rows(loaded, [(1, r) for r in tampered], by_id)[0]
    tool = row["episode"]["calls"][0]["tool"]
    assert finding.message.startswith(
        f"train step {row['step']} item {row['item_id']}: call 0 ({tool}) of its transcript: "
        "result recorded 'The answer is 42.', the tool gives "
    )

    # Evaluation runs the same tool loop (run_live_episodes) and hands the scorer each episode's final text, and the
    # archive each episode's record with the model's tokens per turn.
    evaluated = engine.evaluate(items[:3], max_new_tokens=32)
    assert evaluated.item_ids == [item.id for item in items[:3]]
    assert all(isinstance(text, str) for text in evaluated.completions) and len(evaluated.completion_tokens) == 3
    assert len(evaluated.episodes) == 3 and all(isinstance(e.messages, list) for e in evaluated.episodes)
    for episode, tokens in zip(evaluated.episodes, evaluated.completion_tokens, strict=True):
        model_turns = [turn.tokens for turn in episode.messages if turn.role == "assistant"]
        assert None not in model_turns and sum(model_turns) <= tokens
    assert engine.evaluate(items[:3], max_new_tokens=32).completions == evaluated.completions  # greedy: the same


# A registry lookup of the user's: one that answers, one that raises on every code, one that never returns within
# its 0.5 s.
REGISTRY_TOOLS = '''
import time


def registry(code: str) -> str:
    """Look a part code up in the registry.

    Args:
        code: The part code, e.g. "A-17".
    """
    return f"{code}: hex bolt, 12 mm" if code == "A-17" else f"error: no part {code!r}"


def lookup(code: str) -> str:
    """Look a part code up in the registry.

    Args:
        code: The part code, e.g. "A-17".
    """
    raise KeyError(code)


def slow_lookup(code: str) -> str:
    """Look a part code up in the slow registry.

    Args:
        code: The part code, e.g. "A-17".
    """
    time.sleep(60)
    return code
'''


def registry_engine(tmp_path, tool: str):
    """A live trl engine on the built-in model whose tools include `tool` of REGISTRY_TOOLS, each rollout's first turn
    calling it with code "A-17"; its hooks and recorder."""
    module = f"registry_{tool}"  # a module of its own per case: Python imports a name once
    (tmp_path / f"{module}.py").write_text(REGISTRY_TOOLS)
    tools, problems = load_tools([ToolOfYoursConfig(name=tool, path=f"{module}:{tool}", timeout_s=0.5)], tmp_path)
    assert problems == [] and [t.name for t in tools] == [tool]
    items = live_items()
    model_dir = build_tiny_qwen3([f"{item.prompt}\nAnswer: {item.answer}" for item in items], tmp_path / "m", seed=3)
    config = live_config()
    loaded = LoadedConfig(config=config, path=REPO / "configs" / "live.yaml", overrides=(), sha256="")
    model, tokenizer = load_policy(config.model, config.finetune.method, "cpu", torch.float32, model_dir)
    weights = load_weights(loaded.weights_path, components_for(loaded))
    recorder = RolloutRecorder(config, weights)
    reward_fn = make_reward_fn(
        config.reward, weights, ScoringPipeline(rule_scorer(loaded, thinking=False)), recorder.record
    )
    engine = build_engine(config, items, reward_fn, model, tokenizer, tmp_path / "staging", "cpu", tools=tools)
    script_first_turns(engine.trainer, lambda environment: call(tool, "code", "A-17"))
    return engine, Hooks(recorder), recorder, tools, items


def test_a_tool_of_yours_trains_grpo_steps_on_the_record(tmp_path):
    """Its calls run in TRL's tool loop like the built-in ones: each rollout's first call is in its archived
    transcript with the tool's answer, and replaying the transcripts with the run's tools finds nothing."""
    engine, hooks, _, tools, items = registry_engine(tmp_path, "registry")
    engine.train(hooks, resume_from=None)
    assert [m.step for m in hooks.steps] == list(range(1, STEPS + 1)) and hooks.staged == [STEPS]
    rows = decode_shard(hooks.shards[0])
    assert len(rows) == STEPS * live_config().train.per_device_batch_size
    firsts = [row.episode.calls[0] for row in rows]
    assert {(c.tool, c.arguments["code"], c.result, c.ok) for c in firsts} == {
        ("registry", "A-17", "A-17: hex bolt, 12 mm", True)
    }
    by_id = {item.id: item for item in items}
    assert all(replay_calls(by_id[row.item_id], row.episode.calls, tools) == [] for row in rows)


@pytest.mark.parametrize(
    "tool, why", [("lookup", "raised KeyError: 'A-17'"), ("slow_lookup", "did not return within 0.5 s")]
)
def test_a_tool_of_yours_that_raises_or_hangs_fails_the_grpo_batch_by_its_name(tmp_path, tool, why):
    """TRL's tool loop catches what a tool raises and goes on (the model reads the error); rc1's reward function then
    raises the environment's recorded failure, so the step fails before anything is trained, recorded or archived."""
    engine, hooks, recorder, _, _ = registry_engine(tmp_path, tool)

    with pytest.raises(ToolOfYoursFailed, match=f"^tool {tool} \\(registry_{tool}:{tool}\\) {why}"):
        engine.train(hooks, resume_from=None)
    assert hooks.steps == [] and hooks.staged == [] and recorder.take_shard() is None
