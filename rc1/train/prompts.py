"""The text the policy is shown for an item: its episode's turns through the tokenizer's chat template.

A tokenizer with a chat template (Qwen3's, or the built-in tiny model's ChatML) gets the episode as
messages — system, user, assistant, tool — followed by the generation prompt, so the policy sees
the conversation in the format it was (or will be) trained on. A tokenizer without one gets the flat
rendering (`item.prompt`, "System: … User: …"). An item without turns (a loaded record that was
never dressed as an episode) is one user message.

Fitting to `train.max_prompt_tokens`: TRL 1.16 has no prompt-length option and tokenizes prompts
without truncation, so prompts are fitted here. A conversation that is too long keeps its system turn
whole; the other turns are flattened into one user message that loses tokens from its left side (the
start of the material), so the question and instructions at its end survive, and so does the chat
template around it. Re-encoding decoded text may merge differently, hence the check loop.
"""

from __future__ import annotations

from collections.abc import Callable

from transformers import PreTrainedTokenizerBase

from rc1.data.episodes import render
from rc1.data.task import TaskItem
from rc1.errors import BadInput

Message = dict[str, str]


def messages(item: TaskItem) -> list[Message]:
    if not item.turns:
        return [{"role": "user", "content": item.prompt}]
    out = []
    for turn in item.turns:
        message = {"role": turn.role, "content": turn.content}
        if turn.role == "tool":
            message["name"] = turn.tool
        out.append(message)
    return out


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
    head = conversation[:1] if conversation[0]["role"] == "system" else []
    body = render(item.turns[len(head):]) if item.turns else item.prompt
    return _cut_left(tokenizer, body, lambda text: _apply(tokenizer, [*head, {"role": "user", "content": text}]), limit), True


def _apply(tokenizer: PreTrainedTokenizerBase, conversation: list[Message]) -> str:
    return tokenizer.apply_chat_template(conversation, add_generation_prompt=True, tokenize=False)


def _count(tokenizer: PreTrainedTokenizerBase, text: str) -> int:
    return len(tokenizer(text=text)["input_ids"])


def _cut_left(tokenizer: PreTrainedTokenizerBase, text: str, wrap: Callable[[str], str], limit: int) -> str:
    """`wrap(text minus its first tokens)` in at most `limit` tokens, losing as few tokens as it can."""
    ids = tokenizer(text=text, add_special_tokens=False)["input_ids"]
    cut = max(1, _count(tokenizer, wrap(text)) - limit)
    while cut < len(ids):
        candidate = wrap(tokenizer.decode(ids[cut:]))
        over = _count(tokenizer, candidate) - limit
        if over <= 0:
            return candidate
        cut += over
    raise BadInput(f"train.max_prompt_tokens: {limit} tokens cannot hold any prompt text; raise it")
