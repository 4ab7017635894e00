"""What the policy is shown: the episode's turns through the tokenizer's chat template, fitted from the left."""

import msgspec
import pytest
from conftest import REPO
from transformers import AutoTokenizer

from rc1.core.errors import BadInput
from rc1.data.episodes import dress
from rc1.data.pool import build_pool
from rc1.data.templates import load_pack
from rc1.train.prompts import fit_prompt, messages, render_prompt
from rc1.train.tiny_model import build_tiny_qwen3

PACK_DIR = REPO / "configs" / "templates" / "pack_v2"
MIX = {"hotpotqa": 0.45, "strategyqa": 0.30, "gsm8k": 0.25}


@pytest.fixture(scope="module")
def episodes():
    return dress(
        build_pool(60, MIX, 1234),
        load_pack(PACK_DIR),
        seed=1,
        stream="pool",
        max_turns=3,
        max_tool_hops=2,
        clarify_rate=0.1,
        tools=["wiki", "calc"],
    )


@pytest.fixture(scope="module")
def tokenizer(episodes, tmp_path_factory):
    model_dir = build_tiny_qwen3([e.prompt for e in episodes], tmp_path_factory.mktemp("m") / "tiny", seed=1)
    return AutoTokenizer.from_pretrained(model_dir)


@pytest.fixture(scope="module")
def long_episode(episodes):
    return max(episodes, key=lambda e: (len(e.turns), any(t.role == "tool" for t in e.turns)))


def test_an_episode_becomes_chat_messages_in_its_turn_order(long_episode):
    conversation = messages(long_episode)
    assert [m["role"] for m in conversation] == [t.role for t in long_episode.turns]
    assert conversation[0]["role"] == "system" and conversation[-1]["role"] == "user"
    tool = next(m for m in conversation if m["role"] == "tool")
    assert tool["name"] in ("wiki", "calc")


def test_the_chat_template_frames_every_turn_and_ends_with_the_generation_prompt(tokenizer, long_episode):
    text = render_prompt(tokenizer, long_episode)
    assert text.startswith("<|im_start|>system\n") and text.endswith("<|im_start|>assistant\n")
    assert text.count("<|im_start|>") == len(long_episode.turns) + 1
    assert "<tool_response>" in text
    for turn in long_episode.turns:
        assert turn.content in text


def test_a_tokenizer_without_a_chat_template_sees_the_flat_episode(tokenizer, long_episode):
    plain = AutoTokenizer.from_pretrained(tokenizer.name_or_path)
    plain.chat_template = None
    assert render_prompt(plain, long_episode) == long_episode.prompt
    assert fit_prompt(plain, long_episode, 10_000) == (long_episode.prompt, False)


def _tokens(tokenizer, text):
    return len(tokenizer(text=text)["input_ids"])


def test_a_long_conversation_drops_its_earliest_exchanges_whole_and_stays_a_conversation(tokenizer, long_episode):
    full = render_prompt(tokenizer, long_episode)
    system, *rest = messages(long_episode)
    later = rest[[m["role"] for m in rest].index("user", 1) :]  # from the second user turn on (the tool steps go)
    wanted = tokenizer.apply_chat_template([system, *later], add_generation_prompt=True, tokenize=False)
    fitted, cut = fit_prompt(tokenizer, long_episode, _tokens(tokenizer, wanted))
    assert cut and fitted == wanted and "<tool_response>" in full and "<tool_response>" not in fitted
    assert fit_prompt(tokenizer, long_episode, 10_000) == (full, False)


def test_when_the_last_turn_alone_is_too_long_its_start_is_cut(tokenizer, long_episode):
    system, last = long_episode.turns[0], long_episode.turns[-1]
    alone = tokenizer.apply_chat_template(
        [{"role": "system", "content": system.content}, {"role": "user", "content": last.content}],
        add_generation_prompt=True,
        tokenize=False,
    )
    limit = _tokens(tokenizer, alone) - 10
    fitted, cut = fit_prompt(tokenizer, long_episode, limit)
    assert cut and _tokens(tokenizer, fitted) <= limit
    assert fitted.startswith("<|im_start|>system\n" + system.content + "<|im_end|>\n<|im_start|>user\n")
    assert fitted.endswith(last.content[-40:] + "<|im_end|>\n<|im_start|>assistant\n")
    assert fitted.count("<|im_start|>") == 3


def test_an_undressed_item_is_one_user_message_and_a_limit_too_small_is_bad_input(tokenizer, episodes):
    bare = msgspec.structs.replace(episodes[0], turns=[])
    assert messages(bare) == [{"role": "user", "content": bare.prompt}]
    fitted, cut = fit_prompt(tokenizer, bare, 24)
    assert cut and fitted.startswith("<|im_start|>user\n") and len(tokenizer(text=fitted)["input_ids"]) <= 24
    with pytest.raises(BadInput, match="train.max_prompt_tokens: 3 tokens cannot hold any prompt text"):
        fit_prompt(tokenizer, bare, 3)
