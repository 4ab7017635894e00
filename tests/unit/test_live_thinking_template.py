"""Live episodes on the production model's chat template (issue 43): `with_tool_calling` gives a tokenizer whose own
template opens `<think>` (Qwen/Qwen3-4B-Thinking-2507's) rc1's thinking tool template, which TRL 1.16 takes as it is,
where the model's own is refused; a thinking turn parses into its reasoning and its call, and a call written inside the
thinking is no call. Every check is the installed TRL's own function (trl/chat_template_utils.py, its GRPOTrainer).

The production tokenizer is simulated, offline: the built-in model's tokenizer (rc1/train/tiny_model.py, a byte-level
BPE with `<|im_start|>` and `<|im_end|>` as special tokens) given the model's own template. That template is
tests/data/qwen3_thinking_2507_reconstructed.jinja, a reconstruction from two matching third-party copies: the Hub's
file cannot be fetched here, and it has not been compared with it. In this vocabulary `<think>` and `</think>` are
plain text pieces (`<`, `th`, `in`, `k`, `>`), not the single tokens of Qwen's: TRL's prefix check compares two
renderings in one tokenizer, and the response parser reads decoded text, so neither depends on how they are spelled.
"""

from __future__ import annotations

import copy
import hashlib

import msgspec
import pytest
import torch
from conftest import REPO, training_started_fields
from datasets import Dataset
from live_episodes import build_live_model, call, dressed, live_items, one_step_on_cpu
from transformers import AutoTokenizer, Qwen3ForCausalLM
from trl import GRPOTrainer
from trl.chat_template_utils import (
    add_response_schema,
    is_chat_template_prefix_preserving,
    parse_response,
    qwen3_template,
    supports_tool_calling,
)

from rc1.app.train import _tool_template_sha256
from rc1.config.loading import load_config
from rc1.config.recorded import recorded_overrides
from rc1.data.generators import generate
from rc1.run import events as ev
from rc1.scoring.thinking import template_opens_thinking
from rc1.train.live_generation import tool_schemas
from rc1.train.live_tools import (
    THINKING_TOOL_CHAT_TEMPLATE,
    TOOL_CHAT_TEMPLATE,
    live_environment_factory,
    live_row,
    tool_chat_template,
    with_tool_calling,
)
from rc1.train.tiny_model import CHAT_TEMPLATE

pytestmark = pytest.mark.filterwarnings("ignore:You are using 'environment_factory'")

RECONSTRUCTED = (REPO / "tests/data/qwen3_thinking_2507_reconstructed.jinja").read_text(encoding="utf-8")
OPENS = "<|im_start|>assistant\n<think>\n"  # the generation prompt of the model's own template

RECORDED = recorded_overrides()  # configs/local.yaml as the tiny model runs it, recorded (rc1/config/recorded.py)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return build_live_model(tmp_path_factory.mktemp("models"))


@pytest.fixture(scope="module")
def production(model_dir):
    """The built-in tokenizer with Qwen3-4B-Thinking-2507's own template: the production tokenizer, simulated."""
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    tokenizer.chat_template = RECONSTRUCTED
    return tokenizer


@pytest.fixture(scope="module")
def live(production):
    return with_tool_calling(production)


def _prompt_ids(tokenizer, messages) -> list[int]:
    return tokenizer.apply_chat_template(
        messages, tools=tool_schemas(), add_generation_prompt=True, tokenize=True, return_dict=False
    )


def test_trl_s_checks_refuse_the_model_s_own_template_and_pass_rc1_s(production, live):
    assert supports_tool_calling(production) and not is_chat_template_prefix_preserving(production)
    assert live.chat_template == THINKING_TOOL_CHAT_TEMPLATE
    assert supports_tool_calling(live) and is_chat_template_prefix_preserving(live)
    with pytest.raises(ValueError, match="Unrecognized chat template"):  # TRL knows neither: the parser is rc1's to set
        add_response_schema(copy.deepcopy(production))
    assert live.response_template == qwen3_template and live.eos_token == "<|im_end|>"
    assert production.chat_template == RECONSTRUCTED and production.eos_token == "<|endoftext|>"  # left as it was
    assert getattr(production, "response_template", None) is None


def test_trl_s_trainer_refuses_the_model_s_own_template_and_takes_rc1_s_as_it_is(model_dir, production, live, tmp_path):
    items = live_items()

    def trainer(tokenizer) -> GRPOTrainer:
        return GRPOTrainer(
            model=Qwen3ForCausalLM.from_pretrained(model_dir, dtype=torch.float32),
            reward_funcs=[lambda completions, **_: [0.0] * len(completions)],
            args=one_step_on_cpu(tmp_path, per_device_train_batch_size=2, num_generations=2, max_completion_length=8),
            train_dataset=Dataset.from_list([live_row(item) for item in items]),
            processing_class=tokenizer,
            environment_factory=live_environment_factory(items),
        )

    own = copy.deepcopy(live)
    own.chat_template = RECONSTRUCTED  # everything with_tool_calling sets but the template
    with pytest.raises(ValueError, match="not training-compatible .* patching is not supported"):
        trainer(own)  # grpo_trainer.py:774-779 → chat_template_utils.py:1250-1253
    with pytest.raises(ValueError, match="Unrecognized chat template"):
        trainer(production)  # no response_template: grpo_trainer.py:760-766
    assert trainer(live).chat_template is None  # prefix-preserving: TRL swaps nothing in


def test_the_template_follows_whether_the_tokenizer_s_own_opens_thinking(model_dir, live):
    built = AutoTokenizer.from_pretrained(model_dir)
    assert with_tool_calling(built).chat_template == TOOL_CHAT_TEMPLATE == tool_chat_template(CHAT_TEMPLATE)
    assert template_opens_thinking(RECONSTRUCTED) and template_opens_thinking(THINKING_TOOL_CHAT_TEMPLATE)
    assert not template_opens_thinking(CHAT_TEMPLATE) and not template_opens_thinking(TOOL_CHAT_TEMPLATE)
    for template in (TOOL_CHAT_TEMPLATE, THINKING_TOOL_CHAT_TEMPLATE):  # either gives itself
        assert tool_chat_template(template) == template
    assert with_tool_calling(live).chat_template == THINKING_TOOL_CHAT_TEMPLATE


def test_a_live_row_s_prompt_opens_thinking_as_the_model_s_own_template_writes_it(production, live):
    # as a live run's pool is: a system turn with the tools' rule, then the question
    pool = dressed(generate("hotpotqa", 2, 43, "live-hotpotqa") + generate("gsm8k", 2, 43, "live-gsm8k"), rate=0.25)
    assert all(live_row(item)["prompt"][0]["role"] == "system" for item in pool)
    for item in [*live_items(), *pool]:
        prompt = live_row(item)["prompt"]
        rendered = live.apply_chat_template(prompt, tools=tool_schemas(), add_generation_prompt=True, tokenize=False)
        assert rendered.endswith(OPENS) and '"name": "wiki"' in rendered
        assert rendered == production.apply_chat_template(
            prompt, tools=tool_schemas(), add_generation_prompt=True, tokenize=False
        )
        called = [*prompt, _calling("wiki", {"title": "Paris"}), {"role": "tool", "name": "wiki", "content": "A city."}]
        after = live.apply_chat_template(called, tools=tool_schemas(), add_generation_prompt=True, tokenize=False)
        assert after.endswith(f"<tool_response>\nA city.\n</tool_response><|im_end|>\n{OPENS}")


def test_the_two_templates_differ_only_where_the_model_s_own_drops_a_think_block():
    """A live episode is one user query and the turns after it. Where every turn thinks, rc1's template writes it as
    the model's own does, byte for byte; a turn that did not think gets an empty think block in rc1's and none in the
    model's own, once a message follows it (while it is the last message, both write the block)."""
    opening = [{"role": "system", "content": "Use the tools."}, {"role": "user", "content": "Where is the Louvre?"}]
    thought = {**_calling("wiki", {"title": "Louvre"}), "reasoning_content": "Look it up."}
    episode = [*opening, thought, {"role": "tool", "name": "wiki", "content": "In Paris."}]
    answered = [*episode, {"role": "assistant", "reasoning_content": "It says Paris.", "content": "Answer: Paris"}]
    for messages, generation in ((episode, True), (answered, False), (episode[:3], False)):
        assert _render(THINKING_TOOL_CHAT_TEMPLATE, messages, generation) == _render(
            RECONSTRUCTED, messages, generation
        )
    unthought = [*opening, _calling("wiki", {"title": "Louvre"}), episode[-1]]
    ours, own = _render(THINKING_TOOL_CHAT_TEMPLATE, unthought, True), _render(RECONSTRUCTED, unthought, True)
    assert ours == own.replace(
        "<|im_start|>assistant\n<tool_call>", "<|im_start|>assistant\n<think>\n\n</think>\n\n<tool_call>"
    )
    assert ours != own


def test_a_thinking_turn_parses_into_its_reasoning_and_its_call(live):
    prompt_ids = _prompt_ids(live, live_row(live_items()[0])["prompt"])
    turn = "I should read the page on Paris.\n</think>\n\n" + call("wiki", "title", "Paris")
    parsed = parse_response(live, live.encode(turn, add_special_tokens=False), prefix=prompt_ids, tools=tool_schemas())
    assert parsed == {
        "role": "assistant",
        "reasoning_content": "I should read the page on Paris.",
        "tool_calls": [{"type": "function", "function": {"name": "wiki", "arguments": {"title": "Paris"}}}],
        "content": "",
    }
    called = [
        *live_row(live_items()[0])["prompt"],
        {**_calling("wiki", {"title": "Paris"}), "reasoning_content": "I should read the page on Paris."},
        {"role": "tool", "name": "wiki", "content": "A city."},
    ]
    answer = "It is a city.\n</think>\n\nAnswer: Paris<|im_end|>"  # the turn after a tool result opens thinking too
    parsed = parse_response(live, live.encode(answer, add_special_tokens=False), prefix=_prompt_ids(live, called))
    assert parsed == {"role": "assistant", "reasoning_content": "It is a city.", "content": "Answer: Paris"}


def test_a_tool_call_written_inside_the_thinking_is_not_a_call(model_dir, live):
    prompt = live_row(live_items()[0])["prompt"]
    inner = call("calc", "expression", "2+2").removesuffix("<|im_end|>")
    ids = live.encode(f"Maybe {inner} no, not yet.\n</think>\n\nAnswer: 4<|im_end|>", add_special_tokens=False)
    parsed = parse_response(live, ids, prefix=_prompt_ids(live, prompt), tools=tool_schemas())
    assert parsed == {
        "role": "assistant",
        "reasoning_content": f"Maybe {inner} no, not yet.",
        "content": "Answer: 4",
    }
    # The control: the same text after the instruct template's prompt, which opens no thinking, is a call.
    instruct = with_tool_calling(AutoTokenizer.from_pretrained(model_dir))
    parsed = parse_response(instruct, ids, prefix=_prompt_ids(instruct, prompt), tools=tool_schemas())
    assert parsed["tool_calls"] == [
        {"type": "function", "function": {"name": "calc", "arguments": {"expression": "2+2"}}}
    ]


def test_a_live_line_records_its_tool_template_s_sha256_and_a_recorded_line_nothing(model_dir, production):
    local = REPO / "configs" / "local.yaml"
    recorded = load_config(local, RECORDED).config
    live = load_config(local, [*RECORDED, "data.episodes=live", "monitors.drift=null"]).config
    built = AutoTokenizer.from_pretrained(model_dir)

    assert _tool_template_sha256(recorded, production) is msgspec.UNSET
    before = ev.TrainingStarted(**training_started_fields())
    after = ev.TrainingStarted(**training_started_fields(), tool_template_sha256=_tool_template_sha256(recorded, built))
    assert msgspec.json.encode(after) == msgspec.json.encode(before)  # a recorded line's event, byte for byte
    assert b"tool_template_sha256" not in msgspec.json.encode(before)

    thinking = _tool_template_sha256(live, production)
    assert thinking == hashlib.sha256(THINKING_TOOL_CHAT_TEMPLATE.encode()).hexdigest()
    assert _tool_template_sha256(live, built) == hashlib.sha256(TOOL_CHAT_TEMPLATE.encode()).hexdigest()
    line = msgspec.json.encode(ev.TrainingStarted(**training_started_fields(), tool_template_sha256=thinking))
    assert msgspec.json.decode(line, type=ev.AnyEvent).tool_template_sha256 == thinking
    assert msgspec.json.decode(msgspec.json.encode(before), type=ev.AnyEvent).tool_template_sha256 is msgspec.UNSET


def _calling(tool: str, arguments: dict) -> dict:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"type": "function", "function": {"name": tool, "arguments": arguments}}],
    }


def _render(template: str, messages: list[dict], generation_prompt: bool) -> str:
    from transformers.utils.chat_template_utils import render_jinja_template

    rendered, _ = render_jinja_template(
        [messages], tools=tool_schemas(), chat_template=template, add_generation_prompt=generation_prompt
    )
    return rendered[0]
