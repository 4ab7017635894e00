"""What the user sees of a completion: thinking-aware parsing shared by every scorer.

A thinking model's chat template (Qwen3-4B-Thinking-2507's) ends the generation prompt with `<think>`,
so a completion is `reasoning </think> reply`, and one cut off by max_completion_tokens has no tag at
all. The visible reply is the text after the last `</think>`; a completion that never closes its
thinking has none: no answer, no format credit, no clarification asked (it asked nobody anything).
Thinking is never scored as the answer.

With thinking off the whole completion is visible, except a `<think>` block the model opened by
itself: after its `</think>` when closed, before its `<think>` when not.
"""

from __future__ import annotations

import msgspec

OPEN, CLOSE = "<think>", "</think>"


class Reply(msgspec.Struct, frozen=True, kw_only=True):
    thinking: str
    visible: str | None  # None: the thinking never closed, so nothing was said to the user
    closed: bool  # a thinking block was opened and closed (always False with thinking off and no block)


def split_reply(completion: str, thinking: bool) -> Reply:
    if CLOSE in completion:
        reasoning, visible = completion.rsplit(CLOSE, 1)
        return Reply(thinking=reasoning, visible=visible.strip(), closed=True)
    if thinking:
        return Reply(thinking=completion, visible=None, closed=False)
    if OPEN in completion:
        before, reasoning = completion.split(OPEN, 1)
        return Reply(thinking=reasoning, visible=before.strip() or None, closed=False)
    return Reply(thinking="", visible=completion.strip(), closed=False)


def template_opens_thinking(chat_template: str | None) -> bool:
    """Whether the chat template's generation prompt ends inside an opened `<think>` block."""
    if not chat_template:
        return False
    from transformers.utils.chat_template_utils import render_jinja_template

    rendered, _ = render_jinja_template(
        conversations=[[{"role": "user", "content": "1 + 1?"}]],
        chat_template=chat_template,
        add_generation_prompt=True,
    )
    return rendered[0].rstrip().endswith(OPEN)


def resolve_thinking(setting: str, chat_template: str | None) -> bool:
    """`model.thinking` as a bool: on/off as said, auto from the chat template."""
    if setting == "auto":
        return template_opens_thinking(chat_template)
    return setting == "on"
