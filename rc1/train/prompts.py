"""The text the policy is shown for an item: its episode's turns through the tokenizer's chat template.

A tokenizer with a chat template (Qwen3's, or the built-in tiny model's ChatML) gets the episode as
messages — system, user, assistant, tool — followed by the generation prompt, so the policy sees
the conversation in the format it was (or will be) trained on. A tokenizer without one gets the flat
rendering (`item.prompt`, "System: … User: …"). An item without turns (a loaded record that was
never dressed as an episode) is one user message.

Fitting to `train.max_prompt_tokens`: TRL 1.16 has no prompt-length option and tokenizes prompts
without truncation, so prompts are fitted here. A conversation that is too long keeps its system turn
and drops its earliest exchanges whole (from one user turn, or the first turn, up to the next user
turn), so what remains is still a conversation in the chat format; when the last user turn alone is
still too long, its text loses tokens from its left side (the start of the material), so the question
and instructions at its end survive. A flat prompt (no chat template) is cut from the left the same
way. Re-encoding decoded text may merge differently, hence the check loop.
"""

from __future__ import annotations

from collections.abc import Callable

from transformers import PreTrainedTokenizerBase

from rc1.core.errors import BadInput
from rc1.data.task import TaskItem, episode_messages

Message = dict[str, str]
messages = episode_messages  # the episode as chat messages (rc1/data/task.py)


def render_prompt(tokenizer: PreTrainedTokenizerBase, item: TaskItem) -> str:
    """The whole prompt, unfitted."""
    if tokenizer.chat_template is None:
        return item.prompt
    return _apply(tokenizer, messages(item))


def fit_prompt(tokenizer: PreTrainedTokenizerBase, item: TaskItem, limit: int) -> tuple[str, bool]:
    """The prompt in at most `limit` tokens; return (text, whether it was cut)."""
    rendered = render_prompt(tokenizer, item)
    if _count(tokenizer, rendered) <= limit:
        return rendered, False
    if tokenizer.chat_template is None:
        return _cut_left(tokenizer, item.prompt, lambda text: text, limit), True
    conversation = messages(item)
    head, rest = (conversation[:1], conversation[1:]) if conversation[0]["role"] == "system" else ([], conversation)
    while len(rest) > 1:
        rest = _without_first_exchange(rest)
        candidate = _apply(tokenizer, [*head, *rest])
        if _count(tokenizer, candidate) <= limit:
            return candidate, True
    last = rest[0]

    def wrap(text: str) -> str:
        return _apply(tokenizer, [*head, {**last, "content": text}])

    return _cut_left(tokenizer, last["content"], wrap, limit), True


class FittedPrompts:
    """The prompt text of every item an engine trains on, fitted to `limit` tokens: the pool's up front (so
    `truncated` counts them before training), a fresh item's (priority sampling) when it is first drawn."""

    def __init__(self, tokenizer: PreTrainedTokenizerBase, items: list[TaskItem], limit: int):
        self._tokenizer, self._limit = tokenizer, limit
        fitted = [fit_prompt(tokenizer, item, limit) for item in items]
        self._text = {item.id: text for item, (text, _) in zip(items, fitted)}
        self.truncated = sum(cut for _, cut in fitted)

    def __call__(self, item: TaskItem) -> str:
        if item.id not in self._text:
            self._text[item.id] = fit_prompt(self._tokenizer, item, self._limit)[0]
        return self._text[item.id]


def _without_first_exchange(turns: list[Message]) -> list[Message]:
    """`turns` less its first turn and the non-user turns after it (a tool call's result, an acknowledgement);
    the last turn always stays."""
    k = 1
    while k < len(turns) - 1 and turns[k]["role"] != "user":
        k += 1
    return turns[k:]


def _apply(tokenizer: PreTrainedTokenizerBase, conversation: list[Message]) -> str:
    return tokenizer.apply_chat_template(conversation, add_generation_prompt=True, tokenize=False)


def _count(tokenizer: PreTrainedTokenizerBase, text: str) -> int:
    return len(tokenizer(text=text)["input_ids"])


def _cut_left(tokenizer: PreTrainedTokenizerBase, text: str, wrap: Callable[[str], str], limit: int) -> str:
    """`wrap(text minus its first tokens)` in at most `limit` tokens, losing as few tokens as it can."""
    ids = tokenizer(text=text, add_special_tokens=False)["input_ids"]
    cut = _count(tokenizer, wrap(text)) - limit
    if cut <= 0:
        return wrap(text)
    while cut < len(ids):
        candidate = wrap(tokenizer.decode(ids[cut:]))
        over = _count(tokenizer, candidate) - limit
        if over <= 0:
            return candidate
        cut += over
    raise BadInput(f"train.max_prompt_tokens: {limit} tokens cannot hold any prompt text; raise it")
