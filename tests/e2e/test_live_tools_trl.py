"""Live episodes through TRL's real `GRPOTrainer(environment_factory=…)` (issue 43; the trl engine's live path):
the built-in tiny model with the tool-calling tokenizer (`rc1.train.live_tools`) trains one GRPO step on CPU, each
rollout's environment reset from its own item; with the model's first turns scripted, TRL's own parser and tool loop
run rc1's tools: a page comes back, failures are recorded, and the tool-result tokens are masked out of the loss.

The scripting and the recording of token masks use TRL's private API, pinned to the installed TRL 1.16.0
(`site-packages/trl/trainer/grpo_trainer.py`, `G:` below):
- `_generate_single_turn(prompt_ids, images, multimodal_fields, num_generations, has_tool_images=False)` (G:1763)
  returns `(completion_ids, logprobs)`; `_generate` calls it first with `num_generations=args.num_generations`
  (G:2222-2225), the tool loop after each round of tool results with `num_generations=1` (G:2124-2130). Only the
  first turn is scripted; every later turn is the model's own sampling.
- `_generate(prompts)` (G:2193) returns `(prompt_ids, completion_ids, tool_mask, completions, …)` (G:2322).
Everything else (templates, parsing, tool execution, masks, rewards, the optimizer step) is TRL's and rc1's own.
"""

from __future__ import annotations

import inspect
import json

import pytest
import torch
from conftest import REPO
from datasets import Dataset
from live_episodes import build_live_model, call, live_items, one_step_on_cpu
from transformers import AutoTokenizer, Qwen3ForCausalLM
from transformers.utils import get_json_schema
from trl import GRPOTrainer
from trl.chat_template_utils import (
    is_chat_template_prefix_preserving,
    qwen3_instruct_2507_chat_template,
    qwen3_template,
    supports_tool_calling,
)

from rc1.core.errors import BadInput
from rc1.data.environment import EpisodeEnvironment
from rc1.data.pages import pages
from rc1.data.task import TaskItem
from rc1.train.live_tools import (
    ITEM_COLUMN,
    THINKING_TOOL_CHAT_TEMPLATE,
    TOOL_CHAT_TEMPLATE,
    LiveEnvironment,
    live_environment_factory,
    live_row,
    with_tool_calling,
)
from rc1.train.tiny_model import CHAT_TEMPLATE

pytestmark = [pytest.mark.e2e, pytest.mark.filterwarnings("ignore:You are using 'environment_factory'")]

GENERATIONS = 2  # rollouts per prompt: 4 items, 8 rollouts, one step


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    """The built-in model as `rc1 advance` builds it before its warm start (rc1/app/policy.py): the tokenizer trained
    on the pool's prompts and gold answers, here those of a small generated pool; randomly initialised."""
    return build_live_model(tmp_path_factory.mktemp("models"))


class Run:
    """What one trainer did: per rollout, the row's item id, its environment's item and transcript (read by a reward
    function, TRL's public route), and TRL's own record of the turn (`_generate`: ids, tool mask, messages)."""

    def __init__(self) -> None:
        self.rewarded: list[dict] = []
        self.generated: list[dict] = []
        self.trainer: GRPOTrainer | None = None
        self.moved = False

    def reward(self, prompts, completions, completion_ids, environments, **kwargs) -> list[float]:
        """The share of distinct characters in the last assistant message (varied, so the step has advantages to
        follow); on the way, what each rollout's environment holds now, before the next batch resets it."""
        for i, environment in enumerate(environments):
            self.rewarded.append(
                {
                    "row_item": kwargs[ITEM_COLUMN][i],
                    "env_item": environment.item.id,
                    "prompt": prompts[i],
                    "completion_ids": list(completion_ids[i]),
                    "transcript": environment.transcript,
                    "messages": completions[i],
                }
            )
        finals = [next((m["content"] for m in reversed(c) if m["role"] == "assistant"), "") for c in completions]
        return [len(set(text)) / (1 + len(text)) for text in finals]


def scripted_first_turn(item: TaskItem, rollout: int) -> str:
    """The first turn of a rollout: the item's first page, a page it lacks, a division by zero, a tool rc1 lacks."""
    if item.context:
        title = pages(item.context)[0].title if rollout % 2 == 0 else "No Such Page"
        return call("wiki", "title", title)
    if rollout % 2 == 0:
        return call("calc", "expression", "(3 + 4) / 0")
    return call("search", "query", item.question[:20])


def train_one_step(
    model_dir, tmp_path, *, scripted: bool, budget: int, chat_template: str | None = None, thought: str = ""
) -> Run:
    """One GRPO step over `live_items()`; `budget`: `max_completion_length`, tool results included (G:2044-2063).
    `chat_template`: the tokenizer's own template, in place of the built-in model's; `thought`: what each scripted
    first turn writes before its call."""
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    if chat_template is not None:
        tokenizer.chat_template = chat_template
    tokenizer = with_tool_calling(tokenizer)
    model = Qwen3ForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    items = live_items()
    run = Run()

    class Recorded(GRPOTrainer):
        def _generate_single_turn(self, prompt_ids, images, multimodal_fields, num_generations, has_tool_images=False):
            if not scripted or num_generations == 1:  # the model's own turn (after tool results: G:2124-2130)
                return super()._generate_single_turn(
                    prompt_ids, images, multimodal_fields, num_generations, has_tool_images
                )
            # `self.environments`: the batch's instances in rollout order, reset before generation (G:2352-2398)
            turns = [thought + scripted_first_turn(env.item, i) for i, env in enumerate(self.environments)]
            return [self.processing_class.encode(t, add_special_tokens=False) for t in turns], None

        def _generate(self, prompts):
            out = super()._generate(prompts)
            for prompt_ids, completion_ids, tool_mask, messages in zip(*out[:4], strict=True):
                run.generated.append(
                    {
                        "prompt_ids": prompt_ids,
                        "completion_ids": completion_ids,
                        "tool_mask": tool_mask,
                        "messages": messages,
                    }
                )
            return out

    args = one_step_on_cpu(
        tmp_path / "out",
        per_device_train_batch_size=len(items) * GENERATIONS,
        num_generations=GENERATIONS,
        max_completion_length=budget,
        max_tool_calling_iterations=1,  # one round of tool results, then the model's answer
        learning_rate=1e-3,
        logging_steps=1,
    )
    trainer = Recorded(
        model=model,
        reward_funcs=[run.reward],
        args=args,
        train_dataset=Dataset.from_list([live_row(item) for item in items]),
        processing_class=tokenizer,
        environment_factory=live_environment_factory(items),
    )
    before = {name: p.detach().clone() for name, p in trainer.model.named_parameters()}
    trainer.train()
    run.trainer = trainer
    run.moved = any(not torch.equal(before[name], p) for name, p in trainer.model.named_parameters())
    return run


@pytest.fixture(scope="module")
def live(model_dir, tmp_path_factory) -> tuple[Run, Run]:
    """The same step twice, from the same seed: the model samples every turn."""
    return tuple(
        train_one_step(model_dir, tmp_path_factory.mktemp("live"), scripted=False, budget=16) for _ in range(2)
    )


@pytest.fixture(scope="module")
def scripted(model_dir, tmp_path_factory) -> tuple[Run, Run]:
    """The same step twice, from the same seed: first turns scripted (tool calls), the model's own turns after."""
    return tuple(
        train_one_step(model_dir, tmp_path_factory.mktemp("scripted"), scripted=True, budget=256) for _ in range(2)
    )


def test_the_tool_template_is_trl_s_own_and_leaves_the_built_model_s_tokenizer_alone(model_dir):
    built = AutoTokenizer.from_pretrained(model_dir)
    tokenizer = with_tool_calling(built)
    assert TOOL_CHAT_TEMPLATE == qwen3_instruct_2507_chat_template  # the installed TRL's, byte for byte
    assert supports_tool_calling(tokenizer) and is_chat_template_prefix_preserving(tokenizer)
    assert not supports_tool_calling(built)  # why the built-in template cannot run live episodes
    assert tokenizer.response_template == qwen3_template and tokenizer.eos_token == "<|im_end|>"
    assert tokenizer.pad_token == built.pad_token == "<|endoftext|>"
    assert built.chat_template == CHAT_TEMPLATE and built.eos_token == "<|endoftext|>"
    assert getattr(built, "response_template", None) is None


def test_the_environment_exposes_exactly_the_three_tools_with_the_core_s_schemas():
    trainer_sees = sorted(  # what TRL makes a tool of (G:691-700)
        name
        for name, _ in inspect.getmembers(LiveEnvironment, inspect.isfunction)
        if name not in ("reset", "get_reward") and not name.startswith("_")
    )
    assert trainer_sees == ["ask", "calc", "wiki"]
    for tool in trainer_sees:
        assert get_json_schema(getattr(LiveEnvironment, tool)) == get_json_schema(getattr(EpisodeEnvironment, tool))


def test_trl_accepts_the_template_and_one_step_trains_each_rollout_on_its_own_item(live):
    run = live[0]
    assert run.trainer.state.global_step == 1 and run.moved
    assert run.trainer.chat_template is None  # prefix-preserving as it is: TRL swapped nothing in (G:776-779)
    tokenizer = run.trainer.processing_class
    assert run.trainer.model.generation_config.eos_token_id == [
        tokenizer.convert_tokens_to_ids("<|im_end|>"),
        tokenizer.convert_tokens_to_ids("<|endoftext|>"),
    ]  # a turn ends at either (the Trainer's alignment, see with_tool_calling)
    items = {item.id: item for item in live_items()}
    assert len(run.rewarded) == len(items) * GENERATIONS
    assert {r["row_item"] for r in run.rewarded} == set(items)  # one step saw every item, each in its group
    for r in run.rewarded:
        assert r["env_item"] == r["row_item"]
        assert items[r["row_item"]].prompt in r["prompt"][-1]["content"]


def test_a_valid_call_returns_the_page_failures_are_recorded_and_tool_results_are_masked(scripted):
    run = scripted[0]
    assert run.trainer.state.global_step == 1 and run.moved
    seen = {"page": 0, "no_such_page": 0, "division_by_zero": 0, "unknown": 0}
    tokenizer = run.trainer.processing_class
    for rollout, (r, g) in enumerate(zip(run.rewarded, run.generated, strict=True)):
        assert g["completion_ids"] == r["completion_ids"] and g["messages"] == r["messages"]
        item = next(item for item in live_items() if item.id == r["env_item"])
        call, reply = r["messages"][0]["tool_calls"][0]["function"], r["messages"][1]
        assert reply["role"] == "tool" and reply["name"] == call["name"]
        if call["name"] == "search":  # not one of rc1's tools: TRL answers (G:1986-1991), rc1 never sees the call
            assert reply["content"] == str({"error": "Tool search not found."}) and r["transcript"] == ()
            seen["unknown"] += 1
        else:
            (recorded,) = r["transcript"]
            assert (recorded.tool, recorded.arguments, recorded.result) == (
                call["name"],
                call["arguments"],
                reply["content"],
            )
            if recorded.ok:
                assert recorded.tool == "wiki" and recorded.result == pages(item.context)[0].text
                seen["page"] += 1
            else:
                assert recorded.result.startswith("error: ")
                if recorded.error == "no_such_page":  # the listing is the rollout's own item's pages
                    assert recorded.result.endswith(", ".join(f"'{p.title}'" for p in pages(item.context)))
                seen[recorded.error] += 1
        # The model's first turn is trained on (1), the tool result as the template wraps it is masked (0), the
        # model's answer after it is trained on again (1).
        ids, mask = g["completion_ids"], g["tool_mask"]
        first, tool = mask.index(0), mask.count(0)
        assert mask == [1] * first + [0] * tool + [1] * (len(mask) - first - tool)
        assert ids[:first] == tokenizer.encode(scripted_first_turn(item, rollout), add_special_tokens=False)
        wrapped = f"\n<|im_start|>user\n<tool_response>\n{reply['content']}\n</tool_response><|im_end|>\n"
        assert tokenizer.decode(ids[first : first + tool]) == wrapped + "<|im_start|>assistant\n"
    assert seen == {"page": 2, "no_such_page": 2, "division_by_zero": 2, "unknown": 2}


def test_on_the_thinking_model_s_template_trl_runs_the_call_written_after_the_thinking(model_dir, tmp_path):
    """Qwen3-4B-Thinking-2507's case, simulated: the built-in tokenizer with that model's own template (a
    reconstruction, tests/data/qwen3_thinking_2507_reconstructed.jinja; tests/unit/test_live_thinking_template.py says
    how far the simulation goes), so `with_tool_calling` gives rc1's thinking template. Each scripted first turn
    thinks, closes its thinking and calls; TRL reads the thinking as `reasoning_content` and the call as a call, runs
    it, and the tool turn it masks out of the loss ends by opening the next turn's thinking."""
    reconstructed = (REPO / "tests/data/qwen3_thinking_2507_reconstructed.jinja").read_text(encoding="utf-8")
    thought = "The question names a page or a sum.\n</think>\n\n"
    run = train_one_step(model_dir, tmp_path, scripted=True, budget=256, chat_template=reconstructed, thought=thought)
    # Every rollout called (TRL's own count); no weight need move: the random model never closes its later thinking,
    # so every final reply is empty and every reward equal.
    assert run.trainer.state.global_step == 1 and run.trainer.state.log_history[0]["tools/call_frequency"] == 1
    assert run.trainer.chat_template is None  # prefix-preserving as it is: TRL swapped nothing in (G:776-779)
    tokenizer = run.trainer.processing_class
    assert tokenizer.chat_template == THINKING_TOOL_CHAT_TEMPLATE
    opens = "<|im_start|>assistant\n<think>\n"
    for rollout, (r, g) in enumerate(zip(run.rewarded, run.generated, strict=True)):
        item = next(item for item in live_items() if item.id == r["env_item"])
        scripted = json.loads(scripted_first_turn(item, rollout).split("\n")[1])
        first, reply = r["messages"][0], r["messages"][1]
        assert first["reasoning_content"] == "The question names a page or a sum."
        assert first["tool_calls"] == [{"type": "function", "function": scripted}] and first["content"] == ""
        assert reply["role"] == "tool" and reply["name"] == scripted["name"]
        assert tokenizer.decode(g["prompt_ids"]).endswith(opens)
        ids, mask = g["completion_ids"], g["tool_mask"]
        start, tool = mask.index(0), mask.count(0)
        assert mask == [1] * start + [0] * tool + [1] * (len(mask) - start - tool)
        assert ids[:start] == tokenizer.encode(thought + scripted_first_turn(item, rollout), add_special_tokens=False)
        wrapped = f"\n<|im_start|>user\n<tool_response>\n{reply['content']}\n</tool_response><|im_end|>\n"
        assert tokenizer.decode(ids[start : start + tool]) == wrapped + opens
    assert sum(1 for r in run.rewarded if r["transcript"] and r["transcript"][0].ok) == 2  # the pages were read


def test_the_same_seed_gives_the_same_completions_and_transcripts(live, scripted):
    for first, second in (live, scripted):
        assert [r["completion_ids"] for r in first.rewarded] == [r["completion_ids"] for r in second.rewarded]
        assert [r["transcript"] for r in first.rewarded] == [r["transcript"] for r in second.rewarded]
    assert any(r["transcript"] for r in scripted[0].rewarded)  # equal, and not because there is nothing in them


def test_a_tool_result_past_the_completion_budget_is_dropped_from_the_completion_but_not_from_the_transcript(
    model_dir, tmp_path
):
    """TRL runs the tool, then finds the result would overflow `max_completion_length` and rolls the rollout back to
    its call (G:2044-2063): the episode's transcript holds a call the trained tokens never show."""
    # 140 tokens: a call and its calc error fit (115), a call and a page do not (169 and more)
    run = train_one_step(model_dir, tmp_path, scripted=True, budget=140)
    pages_read = [r for r in run.rewarded if r["transcript"] and r["transcript"][0].ok]
    assert len(pages_read) == 2
    for r, g in ((r, run.generated[run.rewarded.index(r)]) for r in pages_read):
        assert [m["role"] for m in r["messages"]] == ["assistant"] and r["messages"][0]["tool_calls"]
        assert set(g["tool_mask"]) == {1}
    short = [r for r in run.rewarded if r["transcript"] and r["transcript"][0].error == "division_by_zero"]
    assert len(short) == 2 and all(r["messages"][1]["content"] == r["transcript"][0].result for r in short)


def test_an_environment_serves_any_item_of_its_pool_afresh_and_refuses_rows_that_are_not():
    items = live_items()
    environment = live_environment_factory(items)()
    assert environment.transcript == ()
    environment.reset(**live_row(items[2]))
    assert environment.calc("6 * 7") == "42" and [c.tool for c in environment.transcript] == ["calc"]
    environment.reset(**live_row(items[0]))  # TRL reuses an instance for the next rollout it serves
    assert environment.item == items[0] and environment.transcript == ()
    with pytest.raises(ValueError, match="an `item_id` column"):
        environment.reset(prompt=[{"role": "user", "content": "?"}])
    with pytest.raises(ValueError, match="'nope' is not an item of the live environments' pool"):
        environment.reset(prompt=[], item_id="nope")
    with pytest.raises(ValueError, match="two items share the id 'live-gsm8k-000000'"):
        live_environment_factory([*items, items[2]])


def test_a_tokenizer_without_chatml_turns_cannot_run_live_episodes():
    from tokenizers import Tokenizer, models
    from transformers import PreTrainedTokenizerFast

    plain = PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer(models.WordLevel({"a": 0, "<unk>": 1}, unk_token="<unk>")), unk_token="<unk>"
    )
    with pytest.raises(BadInput, match=r"model.name: the tokenizer has no <\|im_end\|> token"):
        with_tool_calling(plain)
