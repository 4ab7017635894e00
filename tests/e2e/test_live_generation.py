"""Live episodes for evaluation (`rc1.train.live_generation`, issue 43; `evaluate_policy` runs it for live items): TRL's
multi-turn tool loop on transformers' `generate`, run with the built-in tiny model on CPU.

The random model never writes a tool call, so some items' first turns are forced (`forced_turns`, the module's hook
for tests and warm-start data): a wiki miss, a wiki hit and a division by zero; every later turn, and every turn of
the fourth item, is the model's own. One test runs TRL's real `GRPOTrainer` on the same forced turns, greedily, and
holds the two loops to the same messages and token counts.
"""

from __future__ import annotations

import pytest
import torch
from datasets import Dataset
from live_episodes import build_live_model, call, live_items, one_step_on_cpu
from transformers import AutoTokenizer, Qwen3ForCausalLM
from trl import GRPOTrainer

from rc1.data.pages import pages
from rc1.data.task import TaskItem
from rc1.scoring.thinking import split_reply, template_opens_thinking
from rc1.train.live_generation import LiveRollout, run_live_episodes, tool_schemas
from rc1.train.live_tools import live_environment_factory, live_row, with_tool_calling
from rc1.train.metrics import Sampling
from rc1.train.rollout_sampler import RolloutSampler

pytestmark = [pytest.mark.e2e, pytest.mark.filterwarnings("ignore:You are using 'environment_factory'")]

BUDGET = 160  # tokens after the prompt, tool results included: a call and its shortest page fit, with a little left
ROUNDS = 1
SAMPLING = Sampling(samples=2, temperature=1.0, seed=7, top_p=0.95, top_k=50)


def short_page(item: TaskItem):
    return min(pages(item.context), key=lambda page: len(page.text))


def first_calls() -> dict[str, list[str]]:
    """A wiki miss, a wiki hit (the item's shortest page), a division by zero; the fourth item writes its own."""
    miss, hit, zero, _ = live_items()
    return {
        miss.id: [call("wiki", "title", "No Such Page")],
        hit.id: [call("wiki", "title", short_page(hit).title)],
        zero.id: [call("calc", "expression", "(3 + 4) / 0")],
    }


def rendered_prompt(tokenizer, item: TaskItem) -> list[int]:
    """The item's prompt as this module renders it: the row's messages, the tools' schemas, the generation prompt."""
    conversation = [live_row(item)["prompt"]]
    rendered = tokenizer.apply_chat_template(
        conversation, tools=tool_schemas(), add_generation_prompt=True, tokenize=True, return_dict=True
    )
    return rendered["input_ids"][0]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    """The built-in model as `rc1 advance` builds it (tokenizer trained on a small generated pool; random weights)."""
    return build_live_model(tmp_path_factory.mktemp("models"))


@pytest.fixture(scope="module")
def policy(model_dir):
    tokenizer = with_tool_calling(AutoTokenizer.from_pretrained(model_dir))
    return Qwen3ForCausalLM.from_pretrained(model_dir, dtype=torch.float32), tokenizer


def episodes(policy, items, *, forced=None, budget=BUDGET, rounds=ROUNDS, sampling=None) -> list[LiveRollout]:
    model, tokenizer = policy
    return run_live_episodes(
        model,
        tokenizer,
        items,
        max_completion_tokens=budget,
        max_tool_rounds=rounds,
        device="cpu",
        sampling=sampling,
        forced_turns=first_calls() if forced is None else forced,
    )


@pytest.fixture(scope="module")
def greedy(policy) -> list[LiveRollout]:
    return episodes(policy, live_items())


@pytest.fixture(scope="module")
def sampled(policy) -> list[LiveRollout]:
    return episodes(policy, live_items(), sampling=SAMPLING)


def test_the_same_seed_gives_the_same_episodes_and_no_global_rng_is_drawn(policy, greedy, sampled):
    rng = torch.random.get_rng_state()
    assert episodes(policy, live_items()) == greedy
    assert episodes(policy, live_items(), sampling=SAMPLING) == sampled
    assert torch.equal(torch.random.get_rng_state(), rng)
    assert [(r.item_id, r.sample) for r in sampled] == [(i.id, k) for i in live_items() for k in range(2)]
    # the seed reaches every turn: a rollout's two samples differ in the model's own first turn and after a tool
    own, after_tool = sampled[6:8], sampled[4:6]
    assert own[0].messages[0] != own[1].messages[0]
    assert after_tool[0].messages[:2] == after_tool[1].messages[:2]  # the forced call and its result
    assert after_tool[0].messages[2:] != after_tool[1].messages[2:]


@pytest.mark.parametrize("mode", ["greedy", "sampled"])
def test_an_item_s_episode_is_the_same_alone_as_in_a_batch_of_four(policy, greedy, sampled, mode):
    """Exact equality, measured on CPU in float32: left padding changed no token of any turn."""
    batch, sampling = (greedy, None) if mode == "greedy" else (sampled, SAMPLING)
    alone = [r for item in live_items() for r in episodes(policy, [item], sampling=sampling)]
    assert alone == batch
    assert any(r.turns == 2 for r in batch)  # turns after a tool result, written with other rows in the batch


def test_the_tool_loop_runs_each_call_on_the_item_s_own_environment(greedy):
    miss, hit, zero, own = greedy
    items = live_items()
    for rollout in (miss, hit, zero):  # each forced call ran, and the model answered the result in the round left
        assert rollout.turns == 2 and rollout.tool_calls == 1 and len(rollout.transcript) == 1
        (recorded,) = rollout.transcript
        call_message, reply = rollout.messages[0], rollout.messages[1]
        assert call_message["tool_calls"][0]["function"] == {"name": recorded.tool, "arguments": recorded.arguments}
        assert reply == {"role": "tool", "name": recorded.tool, "content": recorded.result}
        assert rollout.messages[2]["role"] == "assistant"
    assert miss.transcript[0].error == "no_such_page" and miss.failed_calls == 1
    listing = ", ".join(f"'{page.title}'" for page in pages(items[0].context))
    assert miss.transcript[0].result.endswith(listing)  # the listing is the rollout's own item's pages
    assert hit.transcript[0].ok and hit.transcript[0].result == short_page(items[1]).text and hit.failed_calls == 0
    assert zero.transcript[0].error == "division_by_zero" and not zero.transcript[0].ok and zero.failed_calls == 1
    assert own.transcript == [] and own.tool_calls == 0 and own.turns == 1  # the random model calls nothing
    for rollout in greedy:
        assert rollout.completion_tokens <= BUDGET and rollout.model_tokens <= rollout.completion_tokens


def test_an_unknown_tool_and_arguments_a_tool_does_not_take_are_recorded_failures_the_model_reads(policy):
    """Through `call_tool`: the model reads rc1's `error: …` (TRL, which looks the tool up itself, would show
    `{'error': 'Tool search not found.'}` and a TypeError's text, and record nothing: G:1979-1995)."""
    item = live_items()[3]
    parallel = (
        '<tool_call>\n{"name": "search", "arguments": {"query": "money"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "wiki", "arguments": {"page": "Osdoela"}}\n</tool_call><|im_end|>'
    )
    (failed,) = episodes(policy, [item], forced={item.id: [parallel, "I cannot tell.<|im_end|>"]}, budget=400)
    assert [(c.tool, c.arguments, c.ok, c.error) for c in failed.transcript] == [
        ("search", {"query": "money"}, False, "unknown_tool"),
        ("wiki", {"page": "Osdoela"}, False, "malformed_call"),
    ]
    assert [m["role"] for m in failed.messages] == ["assistant", "tool", "tool", "assistant"]
    assert [m["content"] for m in failed.messages[1:3]] == [c.result for c in failed.transcript]
    assert failed.transcript[0].result == "error: no tool named 'search'; tools: wiki, calc, ask"
    assert failed.tool_calls == failed.failed_calls == 2 and failed.text == "I cannot tell." and not failed.unfinished


def test_the_loop_stops_after_max_tool_rounds_and_leaves_the_next_call_pending(policy):
    item = live_items()[2]
    turns = [call("calc", "expression", f"{k} + 1") for k in range(3)]
    (capped,) = episodes(policy, [item], forced={item.id: turns}, budget=400, rounds=2)
    assert [c.result for c in capped.transcript] == ["1", "2"]  # two rounds ran two calls
    assert capped.turns == 3 and capped.tool_calls == 2 and capped.unfinished and not capped.budget_cut
    assert capped.messages[-1]["tool_calls"][0]["function"]["arguments"] == {"expression": "2 + 1"}
    assert [m["role"] for m in capped.messages] == ["assistant", "tool", "assistant", "tool", "assistant"]
    (none,) = episodes(policy, [item], forced={item.id: turns}, budget=400, rounds=0)
    assert none.transcript == [] and none.turns == 1 and none.unfinished and none.ended


def test_a_tool_result_past_the_budget_is_rolled_back_but_stays_in_the_transcript(policy, greedy):
    items = live_items()
    tokenizer = policy[1]
    first = len(tokenizer.encode(first_calls()[items[1].id][0], add_special_tokens=False))
    (rolled,) = episodes(policy, [items[1]], budget=first + 10)  # the call fits, the page does not
    assert [m["role"] for m in rolled.messages] == ["assistant"] and rolled.messages[0]["tool_calls"]
    assert rolled.transcript[0].ok and rolled.tool_calls == 1  # the tool ran (TRL too: G:2044-2065)
    assert rolled.budget_cut and rolled.unfinished and rolled.ended
    assert rolled.completion_tokens == rolled.model_tokens == first
    hit = greedy[1]  # the page fits, the model's answer after it is cut at the budget
    assert hit.completion_tokens == BUDGET and hit.budget_cut and not hit.ended and not hit.unfinished
    own = greedy[3]  # the model's own first turn never ends: the whole budget, cut
    assert own.completion_tokens == own.model_tokens == BUDGET and own.budget_cut and not own.ended


def test_the_final_text_is_the_last_answer_without_its_thinking(policy, greedy):
    item = live_items()[2]
    turns = [call("calc", "expression", "6 * 7"), "<think>\nsix sevens\n</think>\n\nThe answer is 42.<|im_end|>"]
    (answered,) = episodes(policy, [item], forced={item.id: turns})
    assert answered.transcript[0].result == "42" and not answered.unfinished and answered.turns == 2
    assert answered.messages[-1]["reasoning_content"].strip() == "six sevens"
    assert answered.text == "The answer is 42."
    thinking = template_opens_thinking(policy[1].chat_template)  # the tool template opens none: all is visible
    assert split_reply(answered.text, thinking).visible == answered.text
    for rollout in greedy:
        assert rollout.text == [m for m in rollout.messages if m["role"] == "assistant"][-1]["content"]


def test_the_sampler_draws_from_the_warped_distribution():
    """Gumbel-max over 4,000 rows of one logit vector: the frequencies are softmax's, top-k and top-p hold."""
    logits = torch.tensor([[2.0, 1.0, 0.5, 0.0, -1.0]])
    sampler = RolloutSampler(Sampling(samples=1, temperature=0.7, seed=0), range(4000), "cpu")
    counts = torch.bincount(sampler(None, logits.repeat(4000, 1)).argmax(-1), minlength=5) / 4000
    torch.testing.assert_close(counts, torch.softmax(logits[0] / 0.7, -1), atol=0.03, rtol=0)
    cut = RolloutSampler(Sampling(samples=1, temperature=1.0, seed=0, top_k=3, top_p=0.8), range(4000), "cpu")
    drawn = set(cut(None, logits.repeat(4000, 1)).argmax(-1).tolist())
    assert drawn == {0, 1}  # of the top 3 (0.63, 0.23, 0.14), the fewest holding 80 % of the mass


def test_the_loop_is_trl_s_own_on_the_same_forced_turns(policy, model_dir, tmp_path):
    """TRL's `GRPOTrainer` runs one step greedily (`generation_kwargs`), its first turns forced as here through its
    private `_generate_single_turn` (G:1763, pinned to TRL 1.16.0); its `_generate` output (G:2193, 2322) is held to
    this module's episodes: the same messages, completion length, model tokens and end."""
    tokenizer = with_tool_calling(AutoTokenizer.from_pretrained(model_dir))
    items = live_items()
    forced = first_calls()
    generated: list[tuple] = []

    class Recorded(GRPOTrainer):
        def _generate_single_turn(self, prompt_ids, images, multimodal_fields, num_generations, has_tool_images=False):
            if num_generations == 1:  # after tool results (G:2124-2130): the model's own
                return super()._generate_single_turn(prompt_ids, images, multimodal_fields, 1, has_tool_images)
            ids = [env.item.id for env in self.environments]
            own = [i for i, item_id in enumerate(ids) if item_id not in forced]
            written, _ = super()._generate_single_turn([prompt_ids[i] for i in own], images, multimodal_fields, 1)
            encode = self.processing_class.encode
            out = [encode(forced[item_id][0], add_special_tokens=False) if item_id in forced else [] for item_id in ids]
            for i, turn in zip(own, written, strict=True):
                out[i] = turn
            return out, None

        def _generate(self, prompts):
            out = super()._generate(prompts)
            generated.extend(zip(*out[:4], strict=True))
            return out

    args = one_step_on_cpu(
        tmp_path / "out",
        per_device_train_batch_size=len(items) * 2,
        num_generations=2,
        max_completion_length=BUDGET,
        max_tool_calling_iterations=ROUNDS,
        generation_kwargs={"do_sample": False},
    )
    trainer = Recorded(
        model=Qwen3ForCausalLM.from_pretrained(model_dir, dtype=torch.float32),
        reward_funcs=[lambda completions, **kwargs: [0.0] * len(completions)],
        args=args,
        train_dataset=Dataset.from_list([live_row(item) for item in items]),
        processing_class=tokenizer,
        environment_factory=live_environment_factory(items),
    )
    trainer.train()
    ours = {r.item_id: r for r in episodes(policy, items)}
    prompts = {item.id: rendered_prompt(tokenizer, item) for item in items}
    assert len(generated) == 2 * len(items)
    for prompt_ids, completion_ids, tool_mask, messages in generated:
        (item_id,) = [item_id for item_id, ids in prompts.items() if ids == prompt_ids]  # TRL's prompt is ours
        mine = ours[item_id]
        assert messages == mine.messages
        assert (len(completion_ids), sum(tool_mask)) == (mine.completion_tokens, mine.model_tokens)
        assert (completion_ids[-1] in trainer.eos_token_ids) == mine.ended
    assert {len(m) for _, _, _, m in generated} == {1, 3}  # both kinds ran: an own turn alone, call-result-answer


def perturbed(model, scale: float):
    """A copy of `model` with seeded noise on every weight: a reference the policy has drifted from."""
    import copy

    other = copy.deepcopy(model)
    noise = torch.Generator().manual_seed(11)
    with torch.no_grad():
        for weight in other.parameters():
            weight.add_(torch.randn(weight.shape, generator=noise) * scale)
    return other


def first_turn_drift(policy, reference, rollouts, *, grouped: bool) -> dict[str, list[float]]:
    """Per item, the KLs a DriftProbe measured on the rollouts' first turns: grouped as an evaluation does, or each
    turn alone in a batch of one (nothing padded, nothing shared)."""
    from rc1.train.drift import DriftProbe, frozen_copy
    from rc1.train.generation import _observe_first_turns

    model, tokenizer = policy
    probe = DriftProbe(frozen_copy(reference), SAMPLING.temperature, replies_per_item=SAMPLING.samples)
    for part in [rollouts] if grouped else [[r] for r in rollouts]:
        _observe_first_turns(probe, model, tokenizer, part, "cpu")
    return probe.part()[0]


def test_drift_on_a_live_evaluation_is_its_episodes_first_turns_scored_as_one_turn_replies(policy):
    """A live line's drift monitor (monitors.drift): each episode's first turn, the policy's reply to the prompt and its
    tools before any tool result, scored by the policy and the step-0 policy as a one-turn reply is."""
    from rc1.train.drift import DriftProbe, frozen_copy
    from rc1.train.generation import evaluate_policy
    from rc1.train.live_generation import turn_end_ids

    model, tokenizer = policy
    rollouts = episodes(policy, live_items(), forced={}, sampling=SAMPLING)
    assert all(r.first_turn and len(r.first_turn) == r.turn_tokens[0] for r in rollouts)
    # Against itself the policy has not drifted: every KL is exactly 0.
    same = first_turn_drift(policy, model, rollouts, grouped=True)
    assert sorted(same) == sorted(i.id for i in live_items()) and {v for vs in same.values() for v in vs} == {0.0}
    # Against a perturbed reference: positive, and the same whether the turns share forward passes (grouped by
    # length, prompts left-padded) or go one by one.
    reference = perturbed(model, 0.05)
    grouped = first_turn_drift(policy, reference, rollouts, grouped=True)
    alone = first_turn_drift(policy, reference, rollouts, grouped=False)
    assert grouped.keys() == alone.keys() and all(v > 0 for vs in grouped.values() for v in vs)
    for item_id in grouped:
        assert sorted(grouped[item_id]) == pytest.approx(sorted(alone[item_id]), rel=1e-4, abs=1e-6)

    # evaluate_policy, as training's shadow evaluation calls it, measures it for the first replies_per_item episodes.
    evaluated = evaluate_policy(
        model,
        tokenizer,
        live_items(),
        max_prompt_tokens=512,
        max_new_tokens=BUDGET,
        eos_ids=turn_end_ids(model, tokenizer),
        batch_size=8,
        device="cpu",
        sampling=SAMPLING,
        drift=DriftProbe(frozen_copy(reference), SAMPLING.temperature, replies_per_item=1),
        live_rounds=ROUNDS,
    )
    drift = evaluated.drift
    assert drift is not None and drift.items == len(live_items()) and drift.kl > 0 and drift.low <= drift.kl
    first_turns = [next(t.tokens for t in e.messages if t.role == "assistant") for e in evaluated.episodes]
    assert drift.tokens == sum(first_turns[:: SAMPLING.samples])  # each item's first episode
