"""The one record type every pool and shadow set is made of, and the turns of its episode."""

from __future__ import annotations

from typing import Literal

import msgspec

from rc1.core.catalog import DIFFICULTIES, Difficulty, TaskName  # noqa: F401 (re-exported to the data layer)


class Turn(msgspec.Struct, frozen=True, kw_only=True):
    """One message of an episode; `tool` names the tool a `tool` turn answers for (or an assistant turn calls)."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str
    tool: str = ""


class TaskItem(msgspec.Struct, frozen=True, kw_only=True):
    id: str  # stable across runs with the same seed, e.g. "gsm8k-000017"
    task: str  # a built-in task (rc1/core/catalog.py TASKS) or one of yours (data.tasks)
    question: str  # the question as the user finally asks it
    context: str = ""  # supporting paragraphs (HotpotQA-style), facts (StrategyQA-style); empty otherwise
    answer: str  # gold answer: a number, a short span, or "yes"/"no"
    difficulty: Difficulty
    prompt: str  # exactly what the policy is shown: the episode's turns, rendered
    needs_clarification: bool = False  # the last user turn leaves out what the question needs
    source: str = "builtin"  # "builtin" or the file it was loaded from
    # The episode (template pack): empty for an item that has not been dressed as one.
    turns: list[Turn] = msgspec.field(default_factory=list)
    template: str = ""  # "<task>/<template name>"
    role: str = ""
    style: str = ""
    tool_hops: int = 0

    def user_turns(self) -> int:
        """User turns of the episode; an item not dressed as one is a single user message."""
        return max(1, sum(turn.role == "user" for turn in self.turns))


def episode_messages(item: TaskItem) -> list[dict[str, str]]:
    """The item's episode as chat messages (role, content; a tool turn's `name`), as the policy's chat template
    renders them and as a conversational reward function receives its prompt; an item never dressed as an episode
    is one user message."""
    if not item.turns:
        return [{"role": "user", "content": item.prompt}]
    out = []
    for turn in item.turns:
        message = {"role": turn.role, "content": turn.content}
        if turn.role == "tool":
            message["name"] = turn.tool
        out.append(message)
    return out


def write_items(path, items: list[TaskItem]) -> None:
    """Write JSONL atomically (temp file, fsync, rename) so a pool is never half-written."""
    from rc1.core.fsutil import atomic_write_bytes

    encoder = msgspec.json.Encoder()
    atomic_write_bytes(path, b"".join(encoder.encode(item) + b"\n" for item in items))


def read_items(path) -> list[TaskItem]:
    from rc1.core.errors import BadInput

    decoder = msgspec.json.Decoder(TaskItem)
    items = []
    try:
        fh = open(path, "rb")
    except FileNotFoundError:
        raise BadInput(f"{path}: not found") from None
    with fh:
        for lineno, line in enumerate(fh, 1):
            try:
                items.append(decoder.decode(line))
            except msgspec.DecodeError as e:
                raise BadInput(f"{path}:{lineno}: not a task item: {e}") from None
    return items
