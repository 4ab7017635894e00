"""A live episode as the rollout archive keeps it (issue 43): the completion's messages as TRL parsed them and the
environment's transcript, typed, so `rc1 rollouts` can show the episode and `rc1 audit --rescore` can run its tools
again and read its outcome again (`episode_outcome.outcome`) as training read it.

Whose text is whose: an `assistant` turn is the model's (its text, its thinking, the calls it wrote, and where they
were counted its own `tokens`); a `tool` turn is not (a tool's result, which TRL masks out of the loss). The messages
are kept as `outcome` reads them: a completion that is not a list of message dicts is kept as None (read as an empty
reply), a value of a kind TRL never writes as None (a content that is not a str) or as its repr (a call's name), so
the outcome read from the record is the one read from the rollout.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from rc1.data.environment import ToolCall
from rc1.data.task import TaskItem


class WrittenCall(msgspec.Struct, frozen=True, kw_only=True):
    """A call as the model wrote it and TRL parsed it: the tool it names and its arguments (a dict as parsed; what
    JSON cannot hold, as its repr)."""

    name: str
    arguments: Any


class Turn(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One message of the completion. `assistant`: the model's own turn; `tool`: a tool's result (not the model's)."""

    role: str
    content: str | None = None  # the text (an assistant's with its calls and thinking parsed out)
    reasoning: str | None = None  # assistant: the thinking TRL parsed out (`reasoning_content`)
    calls: list[WrittenCall] = msgspec.field(default_factory=list)  # assistant: the calls it wrote (`tool_calls`)
    name: str | None = None  # tool: the tool whose result this is
    tokens: int | None = None  # assistant: the model's tokens in this turn, where counted (evaluations)


class Episode(msgspec.Struct, frozen=True, kw_only=True):
    """A live completion's record: the flag of the item it ran on (the row's is the scorer's, off in a live
    episode), its messages (None: the completion was not a list of message dicts) and every call the environment
    ran, failures and calls TRL rolled back included."""

    needs_clarification: bool
    messages: list[Turn] | None
    calls: list[ToolCall]


def episode_of(
    item: TaskItem, messages: object, transcript: Sequence[ToolCall], turn_tokens: Sequence[int] | None = None
) -> Episode:
    """The record of one rollout of `item`: its messages (TRL's) and its environment's transcript. `turn_tokens`: the
    model's tokens per assistant message, in order, where they were counted."""
    turns = None
    if isinstance(messages, list) and all(isinstance(m, dict) for m in messages):
        counts = iter(turn_tokens or ())
        turns = [_turn(m, next(counts, None) if m.get("role") == "assistant" else None) for m in messages]
    return Episode(needs_clarification=item.needs_clarification, messages=turns, calls=list(transcript))


def messages_of(episode: Episode) -> list[dict[str, Any]] | None:
    """The completion as TRL handed it to the reward function, rebuilt from the record (what `outcome` reads)."""
    if episode.messages is None:
        return None
    return [_message(turn) for turn in episode.messages]


def _turn(message: dict, tokens: int | None) -> Turn:
    role, content, name = message.get("role"), message.get("content"), message.get("name")
    reasoning = message.get("reasoning_content")
    return Turn(
        role=role if isinstance(role, str) else repr(role),
        content=content if isinstance(content, str) else None,
        reasoning=reasoning if isinstance(reasoning, str) else None,
        calls=_written(message.get("tool_calls")),
        name=name if isinstance(name, str) else None,
        tokens=tokens,
    )


def _written(tool_calls: object) -> list[WrittenCall]:
    if not tool_calls:
        return []
    if not isinstance(tool_calls, list):
        return [WrittenCall(name="", arguments=repr(tool_calls))]
    calls = []
    for call in tool_calls:
        function = call.get("function", call) if isinstance(call, dict) else call  # TRL: {"type", "function": …}
        if not isinstance(function, dict):
            calls.append(WrittenCall(name="", arguments=repr(function)))
            continue
        name = function.get("name")
        calls.append(
            WrittenCall(name=name if isinstance(name, str) else repr(name), arguments=_json(function.get("arguments")))
        )
    return calls


def _json(value: object) -> Any:
    try:
        return msgspec.to_builtins(value)
    except TypeError:  # a value JSON cannot hold: keep what it looked like
        return repr(value)


def _message(turn: Turn) -> dict[str, Any]:
    message: dict[str, Any] = {"role": turn.role, "content": turn.content}
    if turn.name is not None:
        message["name"] = turn.name
    if turn.reasoning is not None:
        message["reasoning_content"] = turn.reasoning
    if turn.calls:
        message["tool_calls"] = [
            {"type": "function", "function": {"name": call.name, "arguments": call.arguments}} for call in turn.calls
        ]
    return message
