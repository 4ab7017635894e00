"""A live episode checked again from its archived record (issue 43): its tools run again, call by call, and its
outcome read again, as training read it. Pure: an item and a record in, what differs out; nothing raises on a record
that is not as rc1 writes one.

Every tool is a function of the item and the calls made before (rc1/data/environment.py), so a fresh
`EpisodeEnvironment` of the item, handed each recorded call with its recorded arguments (`call_tool`, the dispatch
that also records an unknown tool or arguments a tool does not take), must answer each as recorded: same tool,
arguments, result, ok and error kind. One allowance: an unknown tool's name the model wrote as something other than a
string is recorded as its `str`, so its result quotes the name without the quotes a string name gets.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from rc1.data.environment import TITLED_PAGES, TOOLS, EpisodeEnvironment, ToolCall, WikiView, call_tool
from rc1.data.task import TaskItem
from rc1.data.user_tools import ToolOfYours
from rc1.scoring.episode_outcome import CorrectnessInput, clarifications, correctness_input, live_components, outcome
from rc1.scoring.episode_record import Episode, messages_of

CLIP = 60  # characters of a result quoted in a finding


class CallDiffers(msgspec.Struct, frozen=True, kw_only=True):
    """A recorded call its replay does not give back: its place in the transcript (0-based), its tool, and how."""

    index: int
    tool: str
    what: str


def replay_calls(
    item: TaskItem, calls: Sequence[ToolCall], tools: Sequence[ToolOfYours] = (), wiki: WikiView = TITLED_PAGES
) -> list[CallDiffers]:
    """Each recorded call run again, in order, on a fresh environment of `item` with the run's tools of yours
    (`tools`) and wiki as the run showed it (`wiki`, data.wiki); one entry per call that differs. A tool of yours that
    raises or hangs now is ToolOfYoursFailed."""
    env = EpisodeEnvironment(item, tools, wiki=wiki)
    differs = []
    for index, call in enumerate(calls):
        call_tool(env, call.tool, call.arguments)
        again = env.transcript[-1]
        what = _difference(call, again)
        if what:
            differs.append(CallDiffers(index=index, tool=call.tool, what=what))
    return differs


def reread(item: TaskItem, episode: Episode) -> tuple[CorrectnessInput, int, dict[str, float]]:
    """The episode read again from its record as training read the rollout (`live_read`): the reply the scorer
    checks (with the item it is checked against, flag off), the penalty's `c` and the episode's own components
    (`live_components`: tool_success)."""
    read = outcome(item, messages_of(episode), episode.calls)
    return correctness_input(item, read), clarifications(read), live_components(read)


def clip(text: str, width: int = CLIP) -> str:
    flat = text.replace("\n", "⏎")
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _difference(recorded: ToolCall, again: ToolCall) -> str:
    if (recorded.ok, recorded.error) != (again.ok, again.error):
        return (
            f"recorded {_status(recorded)}, replayed {_status(again)} "
            f"(result recorded {clip(recorded.result)!r}, replayed {clip(again.result)!r})"
        )
    if recorded.arguments != again.arguments:
        return f"arguments recorded {recorded.arguments!r}, replayed as {again.arguments!r}"
    if recorded.result != again.result and not _unquoted_name(recorded, again):
        return f"result recorded {clip(recorded.result)!r}, the tool gives {clip(again.result)!r}"
    return ""


def _status(call: ToolCall) -> str:
    return "ok" if call.ok else f"failed ({call.error})"


def _unquoted_name(recorded: ToolCall, again: ToolCall) -> bool:
    """An unknown tool named by a non-string: recorded as `str(name)`, its result quoting `name` unquoted."""
    return (
        recorded.error == again.error == "unknown_tool"
        and recorded.tool not in TOOLS
        and recorded.result == again.result.replace(repr(recorded.tool), recorded.tool, 1)
    )
