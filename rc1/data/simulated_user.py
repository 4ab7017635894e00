"""The `ask` tool's user: answers a clarification with what an under-specified item withholds, from the item alone.

`rc1/data/episodes.py` (`_underspecified`) dresses an item as under-specified in one of two ways, and keeps the full
item's `question` and `context` (only `turns` and `prompt` show the under-specified form), so the withheld fact is
recovered from the item without the template pack:
- an item with a context: the user "forgot to paste" it, so the whole context is withheld. Asked, the user pastes it;
  until then the item's pages are withheld too (`pages_withheld`: `wiki` refuses), as the material was never shared.
- an item without one (GSM8K-style): the first number of the question (`FIRST_NUMBER`) was replaced by a vague
  quantity ("some"). Asked, the user restates the question's sentence that holds it, number included.
A question with no number to hide was asked as is (`dress` still marks it under-specified): the user has nothing to
add, and says so. An item that needs no clarification gets the same reply. The user does not read the question it is
asked beyond checking there is one: every clarification gets the one answer, so a replay gets the same text.
"""

from __future__ import annotations

import re

import msgspec

from rc1.data.episodes import FIRST_NUMBER
from rc1.data.task import TaskItem

NOTHING_TO_ADD = "I have nothing to add: the question as I asked it has everything you need."
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


class Answered(msgspec.Struct, frozen=True, kw_only=True):
    """The user's reply, and whether it gave back what the item withholds."""

    text: str
    gave_withheld: bool = False


def pages_withheld(item: TaskItem) -> bool:
    """The item's context is withheld until the user is asked for it."""
    return item.needs_clarification and bool(item.context)


def withheld(item: TaskItem) -> str:
    """What the under-specified item leaves out, as the user would supply it; "" when it leaves out nothing."""
    if not item.needs_clarification:
        return ""
    if item.context:
        return item.context
    number = FIRST_NUMBER.search(item.question)
    if number is None:
        return ""
    return next((s for s in _SENTENCE.split(item.question) if number.group(0) in s and s.strip()), "")


def answer(item: TaskItem, question: str) -> Answered:
    """The user's reply to a clarifying `question` about `item`."""
    fact = withheld(item)
    if not fact:
        return Answered(text=NOTHING_TO_ADD)
    if item.context:
        return Answered(text=f"Sorry, here are the notes I forgot to paste:\n{fact}", gave_withheld=True)
    return Answered(text=f"Sorry, I left the number out. {fact}", gave_withheld=True)
