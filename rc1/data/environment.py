"""A live episode's environment: the tools `wiki`, `calc` and `ask`, built from one TaskItem alone.

Every tool is a pure function of the item and the calls made so far in the episode (same calls, same results), so a
resumed run, `audit --rescore` and a replay see what training saw: no I/O, no clock, no randomness. Each call is
recorded in order as a `ToolCall`; a failure is a result the model reads (`error: …`) and a recorded call with
`ok=False` and its `error` kind, never an exception: an unknown tool or malformed arguments (`call_tool`), a `wiki`
miss, a `calc` refusal, `wiki` before an under-specified item's material was asked for (`simulated_user`).

TRL (`GRPOTrainer(environment_factory=…)`) exposes an environment's public methods other than `reset` as tools and
builds each one's schema from its type hints and Google-style docstring, so the public methods here are exactly
`reset` and the three tools; the transcript is a property. TRL calls a tool as `method(**arguments)`: a call naming an
unknown tool or arguments the method does not take fails inside TRL before the method runs; `call_tool` is the
dispatch that records those too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import msgspec

from rc1.data import calc as calculator
from rc1.data import simulated_user
from rc1.data.mentions import mention_page
from rc1.data.pages import Page, normal, pages
from rc1.data.task import TaskItem
from rc1.data.user_tools import ToolOfYours, ToolOfYoursFailed

TOOLS = ("wiki", "calc", "ask")
PARAMETERS = {"wiki": "title", "calc": "expression", "ask": "question"}
# How an item's material is cut into the pages `wiki` opens (data.pages): one page per title, each unit of the context
# on the page of its heading or leading name (rc1/data/pages.py), or one page per name, every unit that names it
# (rc1/data/mentions.py).
PageModel = Literal["titles", "mentions"]


class WikiView(msgspec.Struct, frozen=True, kw_only=True):
    """What `wiki` shows: the item's pages cut by `pages`, or, `shown` false, none (data.wiki: empty, a control arm: a
    gain that holds without the pages was not earned by reading them). The tools' schemas follow `pages` either way,
    so a control arm is shown the prompts of the run it controls."""

    pages: PageModel = "titles"
    shown: bool = True


TITLED_PAGES = WikiView()  # the default: issue 43's pages, shown


def wiki_view(data: Any) -> WikiView:
    """A config's `data` section as the view its episodes get (data.pages, data.wiki)."""
    return WikiView(pages=data.pages, shown=data.wiki == "pages")


# The docstring TRL renders as wiki's schema under `data.pages: mentions` (under titles: `EpisodeEnvironment.wiki`'s).
MENTIONS_WIKI_DOC = """Read what the material this question comes with says about a name: every passage that names it.

        Args:
            title: A name from the question or from a passage read before (case does not matter).
        """
ErrorKind = Literal[
    "", "unknown_tool", "malformed_call", "no_such_page", "withheld", "bad_expression", "too_large", "division_by_zero"
]


class ToolCall(msgspec.Struct, frozen=True, kw_only=True):
    """One call of an episode: the tool named, its arguments as given, what the model read back, and whether it
    worked (`error` names the kind of failure; "" when `ok`)."""

    tool: str
    arguments: dict[str, Any]
    result: str
    ok: bool
    error: ErrorKind = ""


class EpisodeEnvironment:
    """The tools of one item's episode, and the transcript of the calls made to them."""

    def __init__(self, item: TaskItem, tools: Sequence[ToolOfYours] = (), *, wiki: WikiView = TITLED_PAGES) -> None:
        self._item = item
        self._tools = {tool.name: tool for tool in tools}  # yours (data.tools_of_yours), by name
        self._failure: ToolOfYoursFailed | None = None  # a tool of yours that raised or hung in this episode
        self._pages: list[Page] = pages(item.context) if wiki.shown else []
        self._by_name = wiki.pages == "mentions"
        self._calls: list[ToolCall] = []
        self._shared = False  # the user has given back what the item withholds (`ask`)

    @property
    def item(self) -> TaskItem:
        return self._item

    @property
    def transcript(self) -> tuple[ToolCall, ...]:
        return tuple(self._calls)

    @property
    def failure(self) -> ToolOfYoursFailed | None:
        """The failure of a tool of yours in this episode, if one raised or hung (TRL's loop catches what a tool
        raises and goes on: the reward function reads it here and fails the batch)."""
        return self._failure

    @property
    def titles(self) -> tuple[str, ...]:
        return tuple(page.title for page in self._pages)

    def reset(self) -> None:
        """Start the item's episode afresh: no calls made, nothing asked."""
        self._calls = []
        self._shared = False

    def wiki(self, title: str) -> str:
        """Look up one page of the material this question comes with, by its exact title.

        Args:
            title: The page's title, usually a name from the question or from a page read before (case does not matter).
        """
        if not isinstance(title, str):
            return self._malformed("wiki", {"title": title})
        if simulated_user.pages_withheld(self._item) and not self._shared:
            message = "error: the user has not shared the material yet; ask them for it"
            return self._record("wiki", {"title": title}, message, "withheld")
        text = self._page_text(title)
        if text is not None:
            return self._record("wiki", {"title": title}, text, "")
        listing = ", ".join(f"'{p.title}'" for p in self._pages) or "none (this question comes with no material)"
        return self._record(
            "wiki", {"title": title}, f"error: no page titled '{title}'; pages: {listing}", "no_such_page"
        )

    def _page_text(self, title: str) -> str | None:
        """The text `title` opens: under titles the page of that title, under mentions every unit naming it."""
        if not self._pages:
            return None
        if self._by_name:
            return mention_page(self._item.context, title)
        page = next((p for p in self._pages if normal(p.title) == normal(title)), None)
        return None if page is None else page.text

    def calc(self, expression: str) -> str:
        """Compute an arithmetic expression exactly: numbers, + - * / // % ** and parentheses.

        Args:
            expression: The arithmetic to do, e.g. "(340 + 25) * 3 - 4 * 12".
        """
        if not isinstance(expression, str):
            return self._malformed("calc", {"expression": expression})
        done = calculator.calculate(expression)
        return self._record("calc", {"expression": expression}, done.text, done.error)

    def ask(self, question: str) -> str:
        """Ask the user one clarifying question, when the question leaves out something you need.

        Args:
            question: What to ask the user, e.g. "Which number did you mean?".
        """
        if not isinstance(question, str) or not question.strip():
            return self._malformed("ask", {"question": question})
        reply = simulated_user.answer(self._item, question)
        self._shared = self._shared or reply.gave_withheld
        return self._record("ask", {"question": question}, reply.text, "")

    def _run_yours(self, tool: str, arguments: object) -> str:
        """One call of a tool of yours, recorded: arguments that are not its call are a recorded `malformed_call`;
        a tool that raises or hangs is ToolOfYoursFailed (rc1/data/user_tools.py), recorded nowhere: the batch
        fails by the tool's name."""
        yours = self._tools[tool]
        why = yours.malformed(arguments)
        if why:
            return self._record(tool, _plain(arguments), f"error: {why}; got {arguments!r}", "malformed_call")
        given = {key: float(v) if yours.parameters[key] is float else v for key, v in arguments.items()}
        try:
            result = yours.run(given)
        except ToolOfYoursFailed as e:
            self._failure = self._failure or e
            raise
        return self._record(tool, _plain(arguments), result, "")

    def _malformed(self, tool: str, arguments: dict[str, Any]) -> str:
        expected = f"{tool} takes one argument, {PARAMETERS[tool]}: a non-empty string"
        return self._record(tool, _plain(arguments), f"error: {expected}; got {arguments!r}", "malformed_call")

    def _record(self, tool: str, arguments: dict[str, Any], result: str, error: ErrorKind) -> str:
        self._calls.append(ToolCall(tool=tool, arguments=arguments, result=result, ok=not error, error=error))
        return result


def call_tool(env: EpisodeEnvironment, tool: object, arguments: object) -> str:
    """Dispatch one call as the model wrote it, recording an unknown tool or arguments the tool does not take; a tool
    of yours (the environment's `tools`) runs as `_run_yours` runs it."""
    if isinstance(tool, str) and tool in env._tools:
        return env._run_yours(tool, arguments)
    if tool not in TOOLS:
        listing = ", ".join((*TOOLS, *env._tools))
        result = f"error: no tool named {tool!r}; tools: {listing}"
        env._record(str(tool), _plain(arguments), result, "unknown_tool")
        return result
    if not isinstance(arguments, dict) or list(arguments) != [PARAMETERS[tool]]:
        return env._malformed(tool, _plain(arguments))
    method = {"wiki": env.wiki, "calc": env.calc, "ask": env.ask}[tool]
    return method(arguments[PARAMETERS[tool]])


def _plain(arguments: object) -> dict[str, Any]:
    """The arguments as a JSON-able dict for the transcript (anything else kept as its repr)."""
    if isinstance(arguments, dict) and all(isinstance(k, str) for k in arguments):
        try:
            return msgspec.to_builtins(arguments)
        except TypeError:  # a value JSON cannot hold: keep what it looked like
            return {"_raw": repr(arguments)}
    return {"_raw": repr(arguments)}
