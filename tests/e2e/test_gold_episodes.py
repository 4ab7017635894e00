"""A live run's warm start learns from gold episodes (rc1/train/gold_episodes.py): every assistant turn of an item's
gold trajectory, its prompt rendered as TRL renders a live rollout's. Held here to the live loop itself: forced to
play those turns, `run_live_episodes` makes the gold path's calls, reads the same results and ends on the gold
answer; each pair's prompt is what the loop had before that turn."""

from __future__ import annotations

import pytest
from live_episodes import build_live_model, dressed
from transformers import AutoModelForCausalLM, AutoTokenizer

from rc1.data.generators import generate
from rc1.data.gold_trajectory import replay
from rc1.data.task import DIFFICULTIES, episode_messages
from rc1.train.gold_episodes import gold_episode_text, gold_messages, gold_turn_pairs
from rc1.train.live_generation import run_live_episodes, tool_schemas
from rc1.train.live_tools import TOOL_CHAT_TEMPLATE, with_tool_calling


def _live(task: str, n: int = 6):
    return dressed(generate(task, n, 43, f"gold-{task}", difficulties=list(DIFFICULTIES) * (n // 3)), rate=0.5)


@pytest.fixture(scope="module")
def items():
    return _live("hotpotqa") + _live("gsm8k") + _live("strategyqa")


@pytest.fixture(scope="module")
def policy(tmp_path_factory):
    folder = build_live_model(tmp_path_factory.mktemp("gold"))
    return AutoModelForCausalLM.from_pretrained(folder), with_tool_calling(AutoTokenizer.from_pretrained(folder))


def test_one_pair_per_gold_call_and_one_for_the_answer(items):
    tools = tool_schemas()
    assert any(item.needs_clarification for item in items)  # an ask is among the calls
    for item in items:
        pairs = gold_turn_pairs(item, TOOL_CHAT_TEMPLATE, tools)
        gold = replay(item)
        assert len(pairs) == len(gold.calls) + 1, item.id
        assert all(turn.endswith("<|im_end|>") for _, turn in pairs)
        assert pairs[-1][1] == f"Answer: {item.answer}<|im_end|>"
        for (_, turn), call in zip(pairs, gold.calls, strict=False):
            assert f'"name": "{call.tool}"' in turn and turn.startswith("<tool_call>\n")
        assert gold_episode_text(item, TOOL_CHAT_TEMPLATE, tools).startswith(pairs[0][0])


def test_the_first_prompt_is_trl_s_rendering_of_the_live_row(items, policy):
    _, tokenizer = policy
    for item in items:
        rendered = tokenizer.apply_chat_template(
            episode_messages(item), tools=tool_schemas(), add_generation_prompt=True, tokenize=False
        )
        assert gold_turn_pairs(item, TOOL_CHAT_TEMPLATE, tool_schemas())[0][0] == rendered


def test_the_live_loop_forced_to_the_gold_turns_replays_the_gold_path(items, policy):
    model, tokenizer = policy
    tools = tool_schemas()
    forced = {item.id: [turn for _, turn in gold_turn_pairs(item, TOOL_CHAT_TEMPLATE, tools)] for item in items}
    rollouts = run_live_episodes(
        model, tokenizer, items, max_completion_tokens=4096, max_tool_rounds=8, device="cpu", forced_turns=forced
    )
    for item, rollout in zip(items, rollouts, strict=True):
        gold = replay(item)
        assert rollout.transcript == gold.calls, item.id
        assert rollout.text == f"Answer: {item.answer}" and not rollout.unfinished
        assert rollout.outcome.answered_without_asking is False
        assert rollout.outcome.asked_needlessly == 0
        # each pair's prompt is the loop's sequence before that turn
        sequence = tokenizer.decode(_prompt_and_completion(tokenizer, item, rollout))
        for prompt, turn in gold_turn_pairs(item, TOOL_CHAT_TEMPLATE, tools):
            assert sequence.startswith(prompt + turn)


def test_an_item_whose_gold_path_fails_is_not_trained_on(items):
    item = next(item for item in items if item.context)
    broken = item.__class__(**{**{f: getattr(item, f) for f in item.__struct_fields__}, "answer": "Nowhere at all"})
    assert gold_messages(broken) is None
    assert gold_turn_pairs(broken, TOOL_CHAT_TEMPLATE, tool_schemas()) == []


def _prompt_and_completion(tokenizer, item, rollout) -> list[int]:
    prompt = tokenizer.apply_chat_template(
        episode_messages(item), tools=tool_schemas(), add_generation_prompt=True, tokenize=True, return_dict=False
    )
    completion = tokenizer.apply_chat_template(
        [*episode_messages(item), *rollout.messages], tools=tool_schemas(), tokenize=True, return_dict=False
    )
    assert completion[: len(prompt)] == prompt
    return completion
