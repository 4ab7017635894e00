"""A live episode's outcome (issue 43), read from what TRL 1.16 hands a reward function: the rollout's messages and
its environment's transcript. Each rollout here is played as TRL plays it, against a real environment of a
generated item: the environment TRL builds (`live_environment_factory`, reset from the item's row), its tools as TRL
collects them (the class's public functions but `reset`/`get_reward`, G:2366-2372), each call run as TRL runs it
(`method(**arguments)`, an exception or an unknown name answered `str({"error": …})`, G:1960-2023), and a turn's
results dropped where they would overflow the budget (G:2042-2065). G is `trl/trainer/grpo_trainer.py` 1.16.0."""

import inspect

import msgspec
import pytest
from conftest import REPO

from rc1.data.episodes import dress
from rc1.data.generators import generate
from rc1.data.pages import pages
from rc1.data.simulated_user import NOTHING_TO_ADD
from rc1.data.task import TaskItem
from rc1.data.templates import load_pack
from rc1.scoring.episode_outcome import EpisodeOutcome, clarifications, correctness_input, outcome, tool_failure
from rc1.scoring.reward import overclar_penalty
from rc1.scoring.rules import RuleScorer
from rc1.train.live_tools import live_environment_factory, live_row

PACK_DIR = REPO / "configs" / "templates" / "pack_v2"


class Rollout:
    """One rollout of `item` as TRL plays it: `said` appends the model's turn as `parse_response` gives it, then runs
    its calls (`then="run"`), leaves them pending as the iteration cap does (`"capped"`), or runs them and drops
    their results as the length budget does (`"rolled_back"`)."""

    def __init__(self, item: TaskItem) -> None:
        self.environment = live_environment_factory([item])()
        self.environment.reset(**live_row(item))
        self.tools = {
            name: getattr(self.environment, name)
            for name, _ in inspect.getmembers(type(self.environment), predicate=inspect.isfunction)
            if name not in ("reset", "get_reward") and not name.startswith("_")
        }
        self.messages: list[dict] = []

    def said(self, content: str = "", *, thinking: str | None = None, calls=(), then: str = "run") -> "Rollout":
        message: dict = {"role": "assistant", "content": content}
        if thinking is not None:
            message["reasoning_content"] = thinking
        if calls:
            message["tool_calls"] = [
                {"type": "function", "function": {"name": name, "arguments": arguments}} for name, arguments in calls
            ]
        self.messages.append(message)
        if not calls or then == "capped":
            return self
        results = []
        for name, arguments in calls:
            try:
                if name not in self.tools:
                    raise ValueError(f"Tool {name} not found.")
                result = self.tools[name](**arguments)
            except Exception as e:
                result = {"error": str(e)}
            results.append({"role": "tool", "name": name, "content": str(result)})
        if then == "run":
            self.messages += results
        return self

    def outcome(self) -> EpisodeOutcome:
        return outcome(self.environment.item, self.messages, self.environment.transcript)


@pytest.fixture(scope="module")
def hotpot() -> TaskItem:
    return generate("hotpotqa", 1, 43, "outcome-hotpotqa")[0]


@pytest.fixture(scope="module")
def gsm8k() -> TaskItem:
    return generate("gsm8k", 1, 43, "outcome-gsm8k")[0]


@pytest.fixture(scope="module")
def unclear() -> TaskItem:
    """A GSM8K item dressed as under-specified: its first number left out, which `ask` gives back."""
    items = generate("gsm8k", 2, 43, "outcome-unclear")
    pack = load_pack(PACK_DIR)
    dressed = dress(items, pack, seed=43, stream="pool", max_turns=1, max_tool_hops=0, clarify_rate=1.0, tools=[])
    assert all(item.needs_clarification for item in dressed)
    return dressed[0]


def _answer(item: TaskItem) -> str:
    return f"Answer: {item.answer}"


def test_a_plain_final_answer_is_the_reply_read_with_no_calls_and_nothing_failed(hotpot):
    episode = Rollout(hotpot).said(_answer(hotpot)).outcome()
    assert episode == EpisodeOutcome(
        final_text=_answer(hotpot),
        unfinished=False,
        asks=0,
        asked_needlessly=0,
        answered_without_asking=False,
        tool_calls=0,
        failed_calls=0,
        tool_hops=0,
        turns=1,
        rolled_back=0,
    )
    assert correctness_input(hotpot, episode).reply == _answer(hotpot)
    assert correctness_input(hotpot, episode).forced_wrong == ""
    assert tool_failure(episode) == 0.0 and clarifications(episode) == 0


def test_a_wiki_hop_then_an_answer_reads_the_answer_after_the_last_result(hotpot):
    title = pages(hotpot.context)[0].title
    rollout = Rollout(hotpot).said(calls=[("wiki", {"title": title})]).said(_answer(hotpot))
    assert [m["role"] for m in rollout.messages] == ["assistant", "tool", "assistant"]
    assert rollout.messages[1] == {"role": "tool", "name": "wiki", "content": pages(hotpot.context)[0].text}
    episode = rollout.outcome()
    assert (episode.final_text, episode.unfinished) == (_answer(hotpot), False)
    assert (episode.tool_calls, episode.tool_hops, episode.failed_calls, episode.turns) == (1, 1, 0, 2)
    assert episode.rolled_back == 0 and episode.malformed == ""


@pytest.mark.parametrize(
    "call, error",
    [
        (("search", {"query": "who"}), "Tool search not found."),
        (("wiki", {"page": "Anything"}), "got an unexpected keyword argument 'page'"),
    ],
)
def test_a_call_trl_cannot_hand_to_a_tool_fails_once_from_trl_s_message_alone(hotpot, call, error):
    rollout = Rollout(hotpot).said(calls=[call]).said(_answer(hotpot))
    assert rollout.environment.transcript == ()  # rc1 never saw it
    assert rollout.messages[1]["content"].startswith("{'error': ") and error in rollout.messages[1]["content"]
    episode = rollout.outcome()
    assert (episode.tool_calls, episode.failed_calls, episode.tool_hops) == (1, 1, 0)
    assert tool_failure(episode) == 1.0 and episode.malformed == ""


def test_a_calc_error_is_rc1_s_failure_shown_as_its_result_and_counted_once(gsm8k):
    rollout = Rollout(gsm8k).said(calls=[("calc", {"expression": "(3 + 4) / 0"})]).said(_answer(gsm8k))
    (recorded,) = rollout.environment.transcript
    assert (recorded.ok, recorded.error) == (False, "division_by_zero")
    assert rollout.messages[1]["content"] == recorded.result  # rc1's own error text, not TRL's `{'error': …}`
    episode = rollout.outcome()
    assert (episode.tool_calls, episode.failed_calls, episode.tool_hops) == (1, 1, 0)


def test_the_failure_share_counts_rc1_s_and_trl_s_failures_over_every_call(gsm8k):
    rollout = (
        Rollout(gsm8k)
        .said(calls=[("calc", {"expression": "2 * 3"}), ("calc", {"expression": "1 / 0"})])
        .said(calls=[("python", {"code": "2 * 3"})])
        .said(_answer(gsm8k))
    )
    episode = rollout.outcome()
    assert (episode.tool_calls, episode.failed_calls, episode.tool_hops, episode.turns) == (3, 2, 1, 3)
    assert tool_failure(episode) == pytest.approx(2 / 3)


def test_an_ask_on_an_item_that_needed_none_is_a_needless_ask_the_penalty_counts(hotpot):
    rollout = Rollout(hotpot).said(calls=[("ask", {"question": "Which one do you mean?"})]).said(_answer(hotpot))
    assert rollout.messages[1]["content"] == NOTHING_TO_ADD
    episode = rollout.outcome()
    assert (episode.asks, episode.asked_needlessly, clarifications(episode)) == (1, 1, 1)
    assert episode.tool_hops == 0 and episode.failed_calls == 0  # an ask is neither a hop nor a failure
    assert overclar_penalty(clarifications(episode), hotpot.needs_clarification, alpha=0.07, cap=3) == 0.07
    assert correctness_input(hotpot, episode).reply == _answer(hotpot)  # the answer still counts


def test_a_failed_ask_asked_nobody_it_is_a_failed_call_not_a_needless_ask(hotpot):
    episode = Rollout(hotpot).said(calls=[("ask", {"question": "  "})]).said(_answer(hotpot)).outcome()
    assert (episode.asks, episode.asked_needlessly, episode.failed_calls) == (0, 0, 1)


def test_an_item_that_needed_clarification_answered_without_asking_is_forced_wrong(unclear):
    episode = Rollout(unclear).said(_answer(unclear)).outcome()
    assert episode.answered_without_asking and episode.asks == 0
    checked = correctness_input(unclear, episode)
    assert checked.reply == "" and "needed clarification" in checked.forced_wrong
    rule = RuleScorer(thinking=False, max_completion_tokens=64, overlong_cache=16)
    assert rule.score(checked.item, checked.reply, 8)["correctness"] == 0.0  # even the gold answer


def test_an_item_that_needed_clarification_asked_then_answered_is_checked_against_its_gold_answer(unclear):
    rollout = Rollout(unclear).said(calls=[("ask", {"question": "How many were there?"})]).said(_answer(unclear))
    assert rollout.messages[1]["content"].startswith("Sorry, I left the number out.")
    episode = rollout.outcome()
    assert (episode.asks, episode.asked_needlessly, episode.answered_without_asking) == (1, 0, False)
    checked = correctness_input(unclear, episode)
    assert checked.forced_wrong == "" and not checked.item.needs_clarification
    rule = RuleScorer(thinking=False, max_completion_tokens=64, overlong_cache=16)
    assert rule.score(checked.item, checked.reply, 8)["correctness"] == 1.0
    assert rule.score(checked.item, "Could you tell me the number?", 8)["correctness"] == 0.0  # prose asks nobody


def test_an_episode_the_iteration_cap_stopped_on_a_call_is_unfinished_and_forced_wrong(hotpot):
    title = pages(hotpot.context)[0].title
    rollout = (
        Rollout(hotpot)
        .said(calls=[("wiki", {"title": title})])
        .said(_answer(hotpot), calls=[("wiki", {"title": title})], then="capped")
    )
    episode = rollout.outcome()
    assert episode.unfinished and episode.final_text == _answer(hotpot)
    assert (episode.tool_calls, episode.tool_hops, episode.rolled_back, episode.turns) == (1, 1, 0, 2)
    checked = correctness_input(hotpot, episode)
    assert checked.reply == "" and checked.forced_wrong.startswith("unfinished")


def test_an_episode_that_ends_on_a_tool_result_gave_no_answer_after_it(hotpot):
    rollout = Rollout(hotpot).said(_answer(hotpot), calls=[("calc", {"expression": "1 + 1"})])
    assert rollout.messages[-1]["role"] == "tool"  # TRL appends nothing when the budget left no post-tool tokens
    assert rollout.outcome().unfinished


def test_a_call_rolled_back_for_the_budget_ran_but_no_tool_message_shows_it(hotpot):
    title = pages(hotpot.context)[0].title
    rollout = Rollout(hotpot).said(calls=[("wiki", {"title": title})], then="rolled_back")
    assert [m["role"] for m in rollout.messages] == ["assistant"] and len(rollout.environment.transcript) == 1
    episode = rollout.outcome()
    assert (episode.rolled_back, episode.tool_calls, episode.tool_hops, episode.unfinished) == (1, 1, 0, True)


def test_a_rolled_back_needless_ask_still_asked_the_user(hotpot):
    rollout = Rollout(hotpot).said(calls=[("ask", {"question": "Which?"})], then="rolled_back")
    episode = rollout.outcome()
    assert (episode.asks, episode.asked_needlessly, episode.rolled_back) == (1, 1, 1)


@pytest.mark.parametrize(
    "content, thinking",
    [
        ("{answer}", "Answer: WRONG, I first thought."),
        ("<think>Maybe Answer: WRONG</think>\n\n{answer}", None),
        ("The parser failed, so the turn is plain text. Answer: WRONG\n</think>\n\n{answer}", None),
        ("{answer}\n<think>Answer: WRONG, a thought never closed", None),
    ],
    ids=["reasoning_content", "inline_think", "fallback_after_prefilled_think", "unclosed_think"],
)
def test_thinking_is_never_the_final_text(hotpot, content, thinking):
    rollout = Rollout(hotpot).said(content.replace("{answer}", _answer(hotpot)), thinking=thinking)
    assert rollout.outcome().final_text == _answer(hotpot)


@pytest.mark.parametrize(
    "messages, problem",
    [
        ("Answer: 3", "a str, not a list of message dicts"),
        (None, "a NoneType, not a list of message dicts"),
        ([{"role": "assistant", "content": "Answer: 3"}, "Answer: 3"], "a list, not a list of message dicts"),
        ([{"role": "assistant", "reasoning_content": "Answer: 3"}], "neither content nor tool_calls"),
        ([{"role": "assistant", "content": None, "tool_calls": []}], "neither content nor tool_calls"),
    ],
)
def test_malformed_input_is_an_empty_reply_named_in_malformed_and_never_raises(gsm8k, messages, problem):
    rollout = Rollout(gsm8k).said(calls=[("calc", {"expression": "1 / 0"})])  # a transcript to count from
    episode = outcome(gsm8k, messages, rollout.environment.transcript)
    assert episode.final_text == "" and problem in episode.malformed
    assert (episode.tool_calls, episode.failed_calls) == (1, 1)
    assert correctness_input(gsm8k, episode).reply == ""


def test_a_tool_message_the_transcript_does_not_hold_is_named_not_counted(hotpot):
    """The environment handed in is not the rollout's: said, and the reply is still read."""
    messages = Rollout(hotpot).said(calls=[("calc", {"expression": "2 + 2"})]).said(_answer(hotpot)).messages
    episode = outcome(hotpot, messages, ())
    assert "neither the transcript's next call nor TRL's error" in episode.malformed
    assert (episode.final_text, episode.tool_calls, episode.tool_hops) == (_answer(hotpot), 0, 0)


def test_correctness_checks_a_live_reply_as_an_answer_never_as_a_clarification(hotpot):
    episode = Rollout(hotpot).said(_answer(hotpot)).outcome()
    unclear = msgspec.structs.replace(hotpot, needs_clarification=True)
    assert correctness_input(unclear, episode).item == msgspec.structs.replace(hotpot, needs_clarification=False)
