"""A live episode's outcome (issue 43): what one rollout did, read from the two records TRL 1.16 hands a reward
function, and the reward inputs the scoring pipeline takes from it. Pure: no I/O, nothing raises on bad input.

The records (`trl/trainer/grpo_trainer.py` 1.16.0, "G"):
- `messages`, the rollout's entry of `completions`: assistant turns as `parse_response` gives them (`content`, always
  a str, thinking in `reasoning_content`, calls in `tool_calls` as `{"type": "function", "function": {"name",
  "arguments"}}`), each call answered by a `{"role": "tool", "name", "content"}` message (G:1960-2023). A call TRL
  cannot hand to a tool (an unknown tool, argument names the tool does not take) never reaches rc1: its tool message
  is `str({"error": …})`, a Python-repr dict (G:1986-1995).
- `transcript`, the rollout's environment's `ToolCall`s: every call rc1 ran, failures included. A call whose result
  would overflow `max_completion_length` ran, but TRL deleted its tool message and stopped the rollout (G:2042-2065).

Rules, with the choices the issue leaves open:
- The tool messages are matched to the transcript in order (same tool, same text): a match is a call rc1 ran and the
  model read; otherwise a `{'error': …}` message is a failure of TRL's; the transcript's calls left unmatched at the
  end are `rolled_back`. A failure is counted once, from whichever record holds it.
- `final_text`: the last assistant message's content, any `<think>` block in it removed as `split_reply` removes
  one with thinking off; `reasoning_content` is never read.
- `unfinished`: no reply follows the last tool call: the last message still calls a tool (the iteration cap left it
  pending, or its results were rolled back) or is a tool result (the budget ran out before the model answered).
- `asks` counts the `ask` calls rc1 ran successfully (rolled back ones too: the user was asked); a failed `ask` asked
  nobody and counts as a failed call only. `asked_needlessly` is `asks` on an item that needs no clarification, and
  0 on one that does (extra asks there cost nothing, as `overclar_penalty` charges such an item nothing). A question
  in the reply's prose is not an ask: in a live episode nobody answers it.
- `answered_without_asking`: the item needs clarification and the episode ended on a reply with no successful `ask`
  read before it.
- `tool_calls` counts the calls that ran or that TRL refused; `tool_hops` the successful `wiki`/`calc` results the
  model read; `turns` the assistant messages. Calls the iteration cap left pending ran nowhere and count in none.
- Malformed input never raises; `malformed` names it. A completion that is not a list of dicts is an empty reply,
  its counts taken from the transcript alone (`turns` and `rolled_back` 0); an assistant message with neither a str
  `content` nor `tool_calls` is an empty turn (the reply, when it is the last); a tool message the transcript does
  not hold next and that is not TRL's error (an environment that is not the rollout's) is named and not counted.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

import msgspec

from rc1.core.catalog import TOOL_SUCCESS
from rc1.data.environment import ToolCall
from rc1.data.task import TaskItem
from rc1.scoring.thinking import split_reply

HOP_TOOLS = ("wiki", "calc")


class EpisodeOutcome(msgspec.Struct, frozen=True, kw_only=True):
    final_text: str  # the reply the answer is read from: the last assistant content, thinking removed
    unfinished: bool  # no reply after the last tool call
    asks: int  # successful `ask` calls
    asked_needlessly: int  # asks on an item that needs no clarification
    answered_without_asking: bool  # the item needs clarification and was answered with no ask before the reply
    tool_calls: int  # calls run by rc1 or refused by TRL
    failed_calls: int  # rc1's failed calls plus TRL's `{'error': …}` results
    tool_hops: int  # successful wiki/calc results the model read
    turns: int  # assistant messages
    rolled_back: int  # calls rc1 ran whose results the completion does not show
    malformed: str = ""  # what was not as TRL writes a completion ("" when all was)
    # What the calls copied (issue 50): wiki calls and those that opened a page; calc calls and those whose every
    # number is one of the question's or of a result read before (`grounded`), not one the model made up.
    wiki_calls: int = 0
    wiki_opened: int = 0
    calc_calls: int = 0
    calc_grounded: int = 0


class CorrectnessInput(msgspec.Struct, frozen=True, kw_only=True):
    """What correctness reads for a live episode: the reply, and the item it is checked against."""

    reply: str  # "" when forced wrong
    item: TaskItem  # needs_clarification off: in a live episode the clarification is the `ask`, not the reply
    forced_wrong: str = ""  # why the reply is not read ("" when it is)


def outcome(item: TaskItem, messages: object, transcript: Sequence[ToolCall]) -> EpisodeOutcome:
    calls = list(transcript)
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        problem = f"the completion is a {type(messages).__name__}, not a list of message dicts"
        return _tally(item, calls, read=calls, refused=0, final="", unfinished=False, turns=0, problem=problem)
    problems, read, refused, cursor = [], [], 0, 0
    for message in messages:
        if message.get("role") != "tool":
            continue
        name, content = message.get("name"), message.get("content")
        if cursor < len(calls) and (calls[cursor].tool, calls[cursor].result) == (name, content):
            read.append(calls[cursor])
            cursor += 1
        elif _refused_by_trl(content):
            refused += 1
        else:
            problems.append(f"a {name!r} tool message that is neither the transcript's next call nor TRL's error")
    turns = [m for m in messages if m.get("role") == "assistant"]
    problems += [f"a message of role {m.get('role')!r}" for m in messages if m.get("role") not in ("assistant", "tool")]
    problems += ["an assistant message with neither content nor tool_calls" for m in turns if _empty(m)]
    last = turns[-1] if turns else {}
    content = last.get("content") if isinstance(last.get("content"), str) else ""
    final = split_reply(content, thinking=False).visible or ""
    ends_on_call = bool(messages) and (messages[-1].get("role") == "tool" or bool(messages[-1].get("tool_calls")))
    return _tally(
        item,
        calls,
        read=read,
        refused=refused,
        final=final,
        unfinished=ends_on_call,
        turns=len(turns),
        problem="; ".join(problems),
        rolled_back=len(calls) - cursor,
    )


def correctness_input(item: TaskItem, episode: EpisodeOutcome) -> CorrectnessInput:
    """The reply to check, or none: an unfinished episode gave no final answer (text beside a pending call is not
    one), and an item that needed clarification answered without asking is wrong whatever it says."""
    live = msgspec.structs.replace(item, needs_clarification=False)
    if episode.unfinished:
        return CorrectnessInput(reply="", item=live, forced_wrong="unfinished: the episode ended on a tool call")
    if episode.answered_without_asking:
        return CorrectnessInput(reply="", item=live, forced_wrong="the item needed clarification and nobody was asked")
    return CorrectnessInput(reply=episode.final_text, item=live)


def clarifications(episode: EpisodeOutcome) -> int:
    """The over-clarification penalty's `c` (`alpha * min(c, cap)`): the needless asks."""
    return episode.asked_needlessly


def tool_failure(episode: EpisodeOutcome) -> float:
    """The share of the episode's calls that failed, in [0, 1]; 0 with no calls (calling nothing fails nothing; a
    missing lookup costs correctness instead). A share, not a count, so its weight means the same for a short and a
    long episode (extra successful calls dilute it, at the cost of budget and turns). Higher is worse: the weights
    file holds weights non-negative, so it enters the reward as `tool_success` = `1 - tool_failure`, as `length`
    enters as 1 plus its penalty."""
    return episode.failed_calls / episode.tool_calls if episode.tool_calls else 0.0


def tool_success(episode: EpisodeOutcome) -> float:
    """The reward component `tool_success`: 1 - `tool_failure`, in [0, 1]; 1.0 when every call worked or none was
    made."""
    return 1.0 - tool_failure(episode)


def live_components(episode: EpisodeOutcome) -> dict[str, float]:
    """The components a live episode adds to the scorer's (rc1/core/catalog.py `LIVE_COMPONENTS`), by name."""
    return {TOOL_SUCCESS: tool_success(episode)}


def _tally(
    item: TaskItem,
    calls: list[ToolCall],
    *,
    read: list[ToolCall],
    refused: int,
    final: str,
    unfinished: bool,
    turns: int,
    problem: str,
    rolled_back: int = 0,
) -> EpisodeOutcome:
    asks = sum(c.tool == "ask" and c.ok for c in calls)
    asked = any(c.tool == "ask" and c.ok for c in read)
    return EpisodeOutcome(
        final_text=final,
        unfinished=unfinished,
        asks=asks,
        asked_needlessly=0 if item.needs_clarification else asks,
        answered_without_asking=item.needs_clarification and not unfinished and not asked,
        tool_calls=len(calls) + refused,
        failed_calls=sum(not c.ok for c in calls) + refused,
        tool_hops=sum(c.tool in HOP_TOOLS and c.ok for c in read),
        turns=turns,
        rolled_back=rolled_back,
        malformed=problem,
        wiki_calls=sum(c.tool == "wiki" for c in calls),
        wiki_opened=sum(c.tool == "wiki" and c.ok for c in calls),
        calc_calls=sum(c.tool == "calc" for c in calls),
        calc_grounded=sum(c.tool == "calc" and grounded(item, calls[:i], c) for i, c in enumerate(calls)),
    )


_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def grounded(item: TaskItem, before: Sequence[ToolCall], call: ToolCall) -> bool:
    """Every number of `call`'s arguments is a number of the item's question or of a result read `before` it
    (thousands separators aside): the call computes on what it was given. A call with no number is not grounded."""
    text = " ".join(str(value) for value in call.arguments.values())
    used = _NUMBER.findall(text)
    given = " ".join([item.question, *(c.result for c in before if c.ok)]).replace(",", "")
    known = set(_NUMBER.findall(given))
    return bool(used) and all(number in known for number in used)


def _empty(message: dict) -> bool:
    return not isinstance(message.get("content"), str) and not message.get("tool_calls")


def _refused_by_trl(content: object) -> bool:
    """TRL's result for a call it could not run: `str({"error": …})` (G:1990, 2020)."""
    if not isinstance(content, str) or not content.startswith("{'error': "):
        return False
    try:
        parsed = ast.literal_eval(content)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return False
    return isinstance(parsed, dict) and list(parsed) == ["error"]
