"""Gold trajectories: the tool calls a good policy makes on an item, derived from the item alone, and their replay.

The calls, in order:
- `ask` first, exactly when the item needs clarification (one fixed question: the user answers every one alike);
- with a context, `wiki` for each gold page. Under `data.pages: titles` (`gold_titles`): the pages that hold a name of
  the question, or a word of it that no other page holds ("crate", a lower-case species), then, round by round, the
  pages that share a name with those read, until a span answer has been read or no page is left to add (at most
  `MAX_ROUNDS` rounds); in context order, which the question does not show. Under `data.pages: mentions`
  (`gold_names`): what a reader of the question and of each page can do, name by name: the question's names in its
  order (a yes/no question's rare words after them, each unless a passage read holds it already), then round by round
  the names of the sentences read that hold a name looked up, in reading order, until a span answer has been read;
- without one, `calc` for each operation a generated GSM8K-style question describes (`gsm8k_steps`), each on the
  running value the last call returned.

`replay` runs them through the item's `EpisodeEnvironment` and says whether every call succeeded and whether the gold
answer is then reachable: a number (no context) is the last `calc` result; "yes"/"no" cannot be read anywhere, so
there the check is that the evidence is in: every name and rare word of the question that the context holds is in a
page read (a check on the lookups, not on the reasoning); any other answer appears in a result read.
"""

from __future__ import annotations

import re

import msgspec

from rc1.data.calc import calc
from rc1.data.environment import EpisodeEnvironment, PageModel, ToolCall, WikiView, call_tool
from rc1.data.gsm8k_steps import steps
from rc1.data.mentions import COMMON, holds, mention_page, passages
from rc1.data.pages import names, normal, pages
from rc1.data.task import TaskItem

MAX_ROUNDS = 4
MAX_NAMED_CALLS = 6  # a `gold_names` path's most wiki calls: data.max_tool_rounds' default (one round a call)
CLARIFY = "Could you give me what you left out?"
_WORD = re.compile(r"\b[a-z][a-z'’]{3,}\b")


class GoldCall(msgspec.Struct, frozen=True, kw_only=True):
    tool: str
    arguments: dict[str, str]


class GoldReplay(msgspec.Struct, frozen=True, kw_only=True):
    """A gold trajectory replayed: its recorded calls, whether each worked, whether the answer is then reachable, and
    why not ("" when both hold)."""

    item_id: str
    calls: list[ToolCall]
    all_ok: bool
    reachable: bool
    why: str = ""


def gold_calls(item: TaskItem, pages_by: PageModel = "titles") -> list[GoldCall]:
    """The item's gold calls with its material cut into pages by `pages_by` (data.pages)."""
    calls = [GoldCall(tool="ask", arguments={"question": CLARIFY})] if item.needs_clarification else []
    if item.context:
        titles = gold_titles(item) if pages_by == "titles" else gold_names(item)
        return calls + [GoldCall(tool="wiki", arguments={"title": t}) for t in titles]
    found = steps(item.question)
    running = str(found.start) if found else ""
    for operation in found.operations if found else []:
        expression = f"{running} {operation}"
        calls.append(GoldCall(tool="calc", arguments={"expression": expression}))
        running = calc(expression)
    return calls


def gold_titles(item: TaskItem) -> list[str]:
    """The titles of the gold pages, in the order a policy reads them (round by round, each round in context order).
    The first round finds the question's names as phrases in a page ("Mozart" in "Wolfgang Amadeus Mozart"), later
    rounds follow the names the pages read so far share with another."""
    book = pages(item.context)
    asked = [normal(n) for n in names(item.question)]
    rare = set(_rare_words(item))
    chosen = [i for i, p in enumerate(book) if any(_holds(normal(p.text), n) for n in asked) or rare & _words(p.text)]
    for _ in range(MAX_ROUNDS - 1):
        read = " ".join(book[i].text for i in chosen)
        if not _yes_no(item) and normal(item.answer) in normal(read):
            break
        known = {normal(n) for i in chosen for n in names(book[i].text)}
        new = [i for i, p in enumerate(book) if i not in chosen and known & {normal(n) for n in names(p.text)}]
        if not new:
            break
        chosen += new
    return [book[i].title for i in chosen]


def gold_names(item: TaskItem) -> list[str]:
    """The names a reader looks up, in order, under `data.pages: mentions` (the module docstring's rule; at most
    `MAX_NAMED_CALLS`). Each opens a page: a name is looked up only where a passage holds it."""
    sentences = passages(item.context)
    looked: list[str] = []
    read: list[str] = []  # passages read so far, in reading order

    def look(name: str) -> bool:
        if normal(name) in {normal(n) for n in looked} or len(looked) >= MAX_NAMED_CALLS:
            return False
        if mention_page(item.context, name) is None:
            return False
        looked.append(name)
        read.extend(s for s in sentences if holds(s, name) and s not in read)
        return True

    def answered() -> bool:
        return not _yes_no(item) and normal(item.answer) in normal(" ".join(read))

    wanted = list(dict.fromkeys(names(item.question, stems=False)))
    if _yes_no(item):
        wanted += _rare_by_passage(item, sentences)
    first = True
    for _ in range(MAX_ROUNDS):
        found = []
        for name in wanted:
            if first and any(holds(p, name) for p in read):
                continue  # a name of the question a passage read already holds needs no call of its own
            if look(name):
                found.append(name)
            if answered():
                return looked
        if not found:
            break
        first = False
        wanted = [n for s in read if any(holds(s, f) for f in found) for n in names(s)]
    return looked


def _rare_by_passage(item: TaskItem, passages: list[str]) -> list[str]:
    """Lower-case words of a yes/no question that exactly one passage holds ("crate", a species)."""
    wanted = [w for w in dict.fromkeys(_WORD.findall(item.question)) if w not in COMMON]
    return [w for w in wanted if sum(holds(p, w) for p in passages) == 1]


def replay(item: TaskItem, pages_by: PageModel = "titles") -> GoldReplay:
    """The item's gold path run through its environment with pages cut by `pages_by`."""
    env = EpisodeEnvironment(item, wiki=WikiView(pages=pages_by))
    for call in gold_calls(item, pages_by):
        call_tool(env, call.tool, call.arguments)
    calls = list(env.transcript)
    failed = [c for c in calls if not c.ok]
    why = "; ".join(f"{c.tool}({next(iter(c.arguments.values()), '')!r}): {c.result[:120]}" for c in failed)
    reachable, missing = _reachable(item, calls)
    return GoldReplay(item_id=item.id, calls=calls, all_ok=not failed, reachable=reachable, why=why or missing)


def _reachable(item: TaskItem, calls: list[ToolCall]) -> tuple[bool, str]:
    read = [c.result for c in calls if c.ok]
    if not item.context:
        results = [c.result for c in calls if c.ok and c.tool == "calc"]
        if not results:
            return False, "no calc steps: the question is not in a generated GSM8K form the gold path can read"
        return (True, "") if results[-1] == calc(item.answer) else (False, f"last calc {results[-1]} != {item.answer}")
    if _yes_no(item):
        text = normal(" ".join(read))
        wanted = {normal(n) for n in names(item.question)} | set(_rare_words(item))
        missing = sorted(w for w in wanted if _holds(normal(item.context), w) and not _holds(text, w))
        return (not missing, f"the question's {missing} are in the context but in no page read" if missing else "")
    if any(normal(item.answer) in normal(r) for r in read):
        return True, ""
    return False, f"the answer {item.answer!r} is in no result read"


def _rare_words(item: TaskItem) -> list[str]:
    """Lower-case words of the question that exactly one page holds."""
    book = [_words(p.text) for p in pages(item.context)]
    wanted = [w for w in _WORD.findall(item.question) if w not in COMMON]
    return [w for w in dict.fromkeys(wanted) if sum(w in page for page in book) == 1]


def _holds(text: str, phrase: str) -> bool:
    return re.search(rf"\b{re.escape(phrase)}\b", text) is not None


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.casefold()))


def _yes_no(item: TaskItem) -> bool:
    return normal(item.answer) in ("yes", "no")
