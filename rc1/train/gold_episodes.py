"""Gold episodes as the policy is trained on them: an item's gold trajectory (`gold_trajectory.gold_calls`, replayed
through its own environment) written out as the chat a live rollout is, and cut into the (prompt, turn) pairs a warm
start learns from.

A live policy must have seen a tool call before RL, or GRPO never samples one (measured on the embedded default: a
warm start on one-turn answers gave 0 tool calls in 80 steps, `tools/call_frequency` 0.0). So a live run's built-in
model is warm-started here: on every assistant turn of every gold episode, its prompt rendered exactly as TRL renders a
live rollout's (the tool-calling template, the tools' schemas from `live_generation.tool_schemas`, the results so far),
the turn itself as the template writes it, up to its `<|im_end|>`. The same rendered episodes are the text the tiny
model's tokenizer is trained on, so a call's markup is a few tokens, not ~55 spelled out char by char.
"""

from __future__ import annotations

from typing import Any

import msgspec

from rc1.data.environment import PageModel
from rc1.data.gold_trajectory import replay
from rc1.data.task import TaskItem, episode_messages
from rc1.scoring.rules import gold_reply

Message = dict[str, Any]
END_OF_TURN = "<|im_end|>"


def gold_messages(item: TaskItem, pages_by: PageModel = "titles") -> list[Message] | None:
    """The item's live episode as a good policy plays it: its prompt, one assistant turn per gold call with the tool's
    reply after it, then `Answer: <gold>`. None when the gold path fails a call or does not reach the answer (such an
    item is never trained on a path that is wrong). `pages_by`: how the material is cut into pages (data.pages)."""
    gold = replay(item, pages_by)
    if not (gold.all_ok and gold.reachable):
        return None
    messages: list[Message] = list(episode_messages(item))
    for call in gold.calls:
        function = {"name": call.tool, "arguments": dict(call.arguments)}
        messages.append(
            {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": function}]}
        )
        messages.append({"role": "tool", "name": call.tool, "content": call.result})
    # The clarification was the `ask` above: the last turn answers.
    messages.append(
        {"role": "assistant", "content": gold_reply(msgspec.structs.replace(item, needs_clarification=False))}
    )
    return messages


def gold_turn_pairs(
    item: TaskItem, chat_template: str, tools: list[dict[str, Any]], pages_by: PageModel = "titles"
) -> list[tuple[str, str]]:
    """One (prompt, turn) pair per assistant turn of the item's gold episode: the prompt is everything before the
    turn with the generation prompt, as TRL renders a live rollout (prefix-preserving template, so the two agree);
    the turn ends at its `<|im_end|>`. Empty when the item has no gold episode."""
    messages = gold_messages(item, pages_by)
    if messages is None:
        return []
    pairs = []
    for end, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        prompt = render_messages(messages[:end], chat_template, tools, generation_prompt=True)
        whole = render_messages(messages[: end + 1], chat_template, tools, generation_prompt=False)
        if not whole.startswith(prompt):
            raise ValueError(f"item {item.id}: the chat template is not prefix-preserving at turn {end}")
        turn = whole[len(prompt) :]
        pairs.append((prompt, turn[: turn.index(END_OF_TURN) + len(END_OF_TURN)]))
    return pairs


def gold_episode_text(
    item: TaskItem, chat_template: str, tools: list[dict[str, Any]] | None, pages_by: PageModel = "titles"
) -> str | None:
    """The whole gold episode as one rendered text (what the tokenizer learns its pieces from)."""
    messages = gold_messages(item, pages_by)
    return None if messages is None else render_messages(messages, chat_template, tools, generation_prompt=False)


def render_messages(
    messages: list[Message], chat_template: str, tools: list[dict[str, Any]] | None, *, generation_prompt: bool
) -> str:
    """`messages` through `chat_template` (with the tools' schema block where `tools` is given), as TRL renders them."""
    from transformers.utils.chat_template_utils import render_jinja_template

    rendered, _ = render_jinja_template(
        [messages], tools=tools, chat_template=chat_template, add_generation_prompt=generation_prompt
    )
    return rendered[0]
