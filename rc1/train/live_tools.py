"""Live episodes through TRL (issue 43): the tool-calling tokenizer of the built-in model and the environment class
`GRPOTrainer(environment_factory=…)` builds, one per rollout, each reset from its row's item.

The trl engine uses it when `data.episodes` is live; a recorded run never does, so `tiny_model.CHAT_TEMPLATE`, the
recorded built model's files and every recorded fingerprint stay as they were.

The row contract (`live_row`): a conversational `prompt` (the item's episode as messages) and an `item_id` column.
TRL hands `reset` the whole row (`grpo_trainer.py:2385-2398`), so each rollout's environment looks its item up by id in
the pool given to `live_environment_factory`: an id, not a position, because the archive and the log speak of items by
id and a shuffled or filtered dataset keeps them.

TRL makes a tool of every public function on the environment's class but `reset` and `get_reward`
(`grpo_trainer.py:686-703`, again per batch at :2366-2372): here exactly `wiki`, `calc` and `ask`, their schemas from
the type hints and the Google-style docstrings of `EpisodeEnvironment`'s tools (one text, so the model reads the same
description the core documents); everything else is `_private` or a property. A call TRL cannot hand to a tool (an
unknown tool, arguments the tool does not take) fails inside TRL before rc1 sees it (`grpo_trainer.py:1979-1991`): the
episode's transcript does not hold it, the tool message in the completion does (`{'error': 'Tool … not found.'}`).

Paths `file:line` are of the installed TRL 1.16.0, under `site-packages/trl/`.
"""

from __future__ import annotations

import copy
import hashlib
import inspect
from collections.abc import Callable, Mapping, Sequence
from importlib.resources import files
from typing import Any

from rc1.core import failpoints
from rc1.core.errors import BadInput
from rc1.data.environment import MENTIONS_WIKI_DOC, TITLED_PAGES, EpisodeEnvironment, ToolCall, WikiView
from rc1.data.task import TaskItem, episode_messages
from rc1.data.user_tools import ToolOfYours, ToolOfYoursFailed
from rc1.scoring.thinking import template_opens_thinking

ITEM_COLUMN = "item_id"
END_OF_TURN = "<|im_end|>"

# TRL's `chat_templates/qwen3_instruct_2507.jinja`, byte for byte (tests/e2e/test_live_tools_trl.py holds it to the
# installed TRL's `chat_template_utils.qwen3_instruct_2507_chat_template`). ChatML as the built-in model's own template
# writes it, plus what a live episode needs: the tools' schemas in the system turn, an assistant turn's `tool_calls`
# as `<tool_call>` JSON, consecutive tool results in one user turn inside `<tool_response>`.
TOOL_CHAT_TEMPLATE = r"""{%- if tools %}
    {{- '<|im_start|>system\n' }}
    {%- if messages[0].role == 'system' %}
        {{- messages[0].content + '\n\n' }}
    {%- endif %}
    {{- "# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>" }}
    {%- for tool in tools %}
        {{- "\n" }}
        {{- tool | tojson }}
    {%- endfor %}
    {{- "\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n" }}
{%- else %}
    {%- if messages[0].role == 'system' %}
        {{- '<|im_start|>system\n' + messages[0].content + '<|im_end|>\n' }}
    {%- endif %}
{%- endif %}
{%- for message in messages %}
    {%- if message.content is string %}
        {%- set content = message.content %}
    {%- else %}
        {%- set content = '' %}
    {%- endif %}
    {%- if (message.role == "user") or (message.role == "system" and not loop.first) %}
        {{- '<|im_start|>' + message.role + '\n' + content + '<|im_end|>' + '\n' }}
    {%- elif message.role == "assistant" %}
        {{- '<|im_start|>' + message.role + '\n' + content }}
        {%- if message.tool_calls %}
            {%- for tool_call in message.tool_calls %}
                {%- if (loop.first and content) or (not loop.first) %}
                    {{- '\n' }}
                {%- endif %}
                {%- if tool_call.function %}
                    {%- set tool_call = tool_call.function %}
                {%- endif %}
                {{- '<tool_call>\n{"name": "' }}
                {{- tool_call.name }}
                {{- '", "arguments": ' }}
                {%- if tool_call.arguments is string %}
                    {{- tool_call.arguments }}
                {%- else %}
                    {{- tool_call.arguments | tojson }}
                {%- endif %}
                {{- '}\n</tool_call>' }}
            {%- endfor %}
        {%- endif %}
        {{- '<|im_end|>\n' }}
    {%- elif message.role == "tool" %}
        {%- if loop.first or (messages[loop.index0 - 1].role != "tool") %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\n<tool_response>\n' }}
        {{- content }}
        {{- '\n</tool_response>' }}
        {%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}
            {{- '<|im_end|>\n' }}
        {%- endif %}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
{%- endif %}"""  # noqa: E501

# rc1's template for a thinking model, Qwen/Qwen3-4B-Thinking-2507 (rc1/train/templates/, package data): the model's own
# template with every assistant turn rendered with its think block, so that it is prefix-preserving; its generation
# prompt opens `<think>\n` as the model's own does. The model's own (a reconstruction: tests/data/
# qwen3_thinking_2507_reconstructed.jinja) is one TRL 1.16 refuses; tests/unit/test_live_thinking_template.py holds both
# to the installed TRL's checks.
THINKING_TOOL_CHAT_TEMPLATE = (files("rc1.train") / "templates" / "qwen3_thinking_2507_tools.jinja").read_text(
    encoding="utf-8"
)


def tool_chat_template(chat_template: str | None) -> str:
    """The template live episodes render with, for a tokenizer whose own template is `chat_template`: the thinking
    one (`THINKING_TOOL_CHAT_TEMPLATE`) when that template's generation prompt opens `<think>`
    (`rc1.scoring.thinking.template_opens_thinking`, what `model.thinking: auto` reads), else `TOOL_CHAT_TEMPLATE`
    (the built-in model's, and any ChatML template that leaves thinking to the model). Either template gives itself."""
    return THINKING_TOOL_CHAT_TEMPLATE if template_opens_thinking(chat_template) else TOOL_CHAT_TEMPLATE


def tool_template_sha256(chat_template: str | None) -> str:
    """sha256 of the template live episodes render with for a tokenizer whose own template is `chat_template`
    (`tool_chat_template`, its UTF-8 bytes): what `training_started.tool_template_sha256` records."""
    return hashlib.sha256(tool_chat_template(chat_template).encode("utf-8")).hexdigest()


def with_tool_calling(tokenizer: Any) -> Any:
    """A copy of `tokenizer` that TRL's `GRPOTrainer` runs live episodes with; `tokenizer` itself is left as it is.

    Three settings, each decided by the installed TRL (`trl/…` paths, TRL 1.16.0; `transformers/…`, 5.24.0):
    - `chat_template = tool_chat_template(tokenizer.chat_template)`: `TOOL_CHAT_TEMPLATE`, or
      `THINKING_TOOL_CHAT_TEMPLATE` when the tokenizer's own template opens `<think>` in its generation prompt.
      `trainer/grpo_trainer.py:650-654` refuses, with "The provided chat template does not support tool calling", a
      template that does not render user → assistant `tool_calls` → tool with the call's name, argument and result in
      the text (`chat_template_utils.py:800-863`); the built-in model's own `CHAT_TEMPLATE` renders no `tool_calls`.
      It must also be prefix-preserving: [user, assistant with `tool_calls`] rendered must be a token prefix of
      [user, assistant, tool] rendered with the generation prompt (`chat_template_utils.py:866-924`), or
      `grpo_trainer.py:774-779` swaps in a stored training template from `get_training_chat_template`, which exists
      only for templates TRL knows byte for byte and raises "The chat template is not training-compatible … patching
      is not supported" for any other (`chat_template_utils.py:1077-1253`). TRL's Qwen3-Instruct-2507 template is both,
      and it is one of the four TRL recognises as Qwen3 (`chat_template_utils.py:733-739`). Qwen3-4B-Thinking-2507's
      own renders tools but writes an assistant turn's think block only while it is the last message (or has
      reasoning), so the turn changes once a tool message follows: refused. Its rc1 variant writes the block always
      and is both; replacing the model's template with the instruct one would instead drop the `<think>\\n` the
      model's own generation prompt opens.
    - `response_template = chat_template_utils.qwen3_template` (`chat_template_utils.py:338-358`): how a turn is read
      back into `tool_calls`, `<think>` as `reasoning_content`, and `content` (`chat_template_utils.py:1341-1358`,
      called after every turn at `grpo_trainer.py:2228-2242` and 2170-2177). Set here rather than left to
      `add_response_schema` (`grpo_trainer.py:760-766`, which raises "Unrecognized chat template" for a template
      that is not byte-identical to a stored one, `chat_template_utils.py:686-797`: the thinking template is none),
      so a TRL whose stored copy changed still parses ours. Never only the legacy `response_schema`: transformers
      5.24 has no prefix-less parse for it and the first turn fails (`grpo_trainer.py:767-773` only warns). With the
      thinking template the parser's prefix, the prompt cut back to its last `<|im_start|>assistant\\n`
      (`transformers/utils/chat_parsing/response_templates.py:57-72`, fed at `response_parser.py:162-177`), is
      `<think>\\n`: the turn starts inside `reasoning_content`, where the parser watches only for the region's close
      (`response_parser.py:252-267`), so a `<tool_call>` the model writes while thinking is not a call.
    - `eos_token = "<|im_end|>"` (pad stays as it was). `_get_tool_suffix_ids` cuts the rendered tool turn at the
      tokenizer's eos (`grpo_trainer.py:1934-1943`): with the built-in `<|endoftext|>` the `\\n` after `<|im_end|>`
      would be lost and the tokens trained on would differ from the template's. The model needs no change: the
      transformers Trainer puts the tokenizer's eos first in the model's generation config and keeps the model's own
      (`transformers/trainer.py:1534`, `transformers/trainer_utils.py:1172-1246`, logging a warning once), and TRL
      ends a turn at every one of them (`grpo_trainer.py:408-416`).

    Raises BadInput (about `model.name`) when the tokenizer has no `<|im_end|>` token: not a ChatML tokenizer.
    """
    from trl.chat_template_utils import qwen3_template

    if END_OF_TURN not in tokenizer.get_vocab():
        raise BadInput(
            f"model.name: the tokenizer has no {END_OF_TURN} token; live episodes need a ChatML (Qwen3-style) "
            "tokenizer, whose turns end with it"
        )
    tool_tokenizer = copy.deepcopy(tokenizer)
    tool_tokenizer.chat_template = tool_chat_template(tokenizer.chat_template)
    tool_tokenizer.response_template = copy.deepcopy(qwen3_template)
    tool_tokenizer.eos_token = END_OF_TURN
    return tool_tokenizer


def live_row(item: TaskItem) -> dict[str, Any]:
    """The dataset row of an item's live episode: its episode as conversational messages and its id."""
    return {"prompt": episode_messages(item), ITEM_COLUMN: item.id}


class LiveEnvironment:
    """One rollout's tools, as TRL's `environment_factory` builds them: built once, `reset` for each rollout it serves
    (TRL reuses an instance across batches, `grpo_trainer.py:2352-2360`), each time a fresh `EpisodeEnvironment` of
    the row's item."""

    _yours: tuple[ToolOfYours, ...] = ()  # the run's tools of yours (`live_environment_class`)
    _wiki: WikiView = TITLED_PAGES  # what wiki shows (data.wiki; `live_environment_class`)

    def __init__(self, items: Mapping[str, TaskItem]) -> None:
        self._items = items
        self._episode: EpisodeEnvironment | None = None

    def reset(self, **row: Any) -> None:
        """Start the episode of the row's item (`item_id`); the prompt stays as it is (None)."""
        if ITEM_COLUMN not in row:
            raise ValueError(
                f"a live episode's row names its item in an `{ITEM_COLUMN}` column (`live_row`); "
                f"this row has {sorted(row)}"
            )
        item_id = row[ITEM_COLUMN]
        if item_id not in self._items:
            raise ValueError(
                f"row {ITEM_COLUMN}={item_id!r} is not an item of the live environments' pool "
                f"({len(self._items)} items): build the dataset and `live_environment_factory` from the same items"
            )
        self._episode = EpisodeEnvironment(self._items[item_id], self._yours, wiki=self._wiki)

    @property
    def item(self) -> TaskItem:
        """The item of the episode now running."""
        return self._started().item

    @property
    def transcript(self) -> tuple[ToolCall, ...]:
        """The episode's calls so far, failures included; empty before the first `reset`."""
        return self._episode.transcript if self._episode is not None else ()

    @property
    def failure(self) -> ToolOfYoursFailed | None:
        """A tool of yours that raised or hung in the episode now running (`EpisodeEnvironment.failure`)."""
        return self._episode.failure if self._episode is not None else None

    def wiki(self, title: str) -> str:
        return self._calling().wiki(title)

    def calc(self, expression: str) -> str:
        return self._calling().calc(expression)

    def ask(self, question: str) -> str:
        return self._calling().ask(question)

    # The model reads the core's own descriptions: the schema TRL renders comes from these docstrings.
    wiki.__doc__ = EpisodeEnvironment.wiki.__doc__
    calc.__doc__ = EpisodeEnvironment.calc.__doc__
    ask.__doc__ = EpisodeEnvironment.ask.__doc__

    def _started(self) -> EpisodeEnvironment:
        if self._episode is None:
            raise RuntimeError("a live environment's tools run after its reset(**row), which picks the item")
        return self._episode

    def _calling(self) -> EpisodeEnvironment:
        """The episode a tool call is about to run in (the `tool` kill point: a crash test dies here, mid-step)."""
        failpoints.reached("tool")
        return self._started()


def live_environment_class(tools: Sequence[ToolOfYours], wiki: WikiView = TITLED_PAGES) -> type[LiveEnvironment]:
    """The environment class TRL sees for a run with `tools` of yours: `LiveEnvironment` itself without any, else a
    subclass with one method per tool, named as the config names it, whose signature, annotations and docstring are
    the function's, so TRL's `get_json_schema` renders the user's schema (G:691-702). A call goes through
    `call_tool`, so it is recorded in the transcript and replayed as `audit --rescore` replays it; one that raises or
    hangs is ToolOfYoursFailed, which TRL's loop catches (G:1986-1995) and rc1's reward function raises again from
    `failure` (rc1/scoring/pipeline.py `make_reward_fn`), failing the batch by the tool's name."""
    if not tools and wiki == TITLED_PAGES:
        return LiveEnvironment
    methods: dict[str, Any] = {"_yours": tuple(tools), "_wiki": wiki}
    if wiki.pages == "mentions":  # the same call, described as what it does there (a page per name)
        methods["wiki"] = _mentions_wiki
    for tool in tools:
        methods[tool.name] = _tool_method(tool)
    return type(_class_name(tools, wiki), (LiveEnvironment,), methods)


def _class_name(tools: Sequence[ToolOfYours], wiki: WikiView) -> str:
    if tools:
        return "LiveEnvironmentWithYours"
    return "LiveEnvironmentWithoutPages" if not wiki.shown else "LiveEnvironmentOfMentions"


def _mentions_wiki(self, title: str) -> str:  # no hint on self: TRL reads every hint into the schema
    return self._calling().wiki(title)


_mentions_wiki.__doc__ = MENTIONS_WIKI_DOC
_mentions_wiki.__name__ = _mentions_wiki.__qualname__ = "wiki"


def _tool_method(tool: ToolOfYours) -> Callable[..., str]:
    from rc1.data.environment import call_tool

    def method(self: LiveEnvironment, **arguments: Any) -> str:
        return call_tool(self._calling(), tool.name, arguments)

    signature = inspect.signature(tool.fn)
    self_parameter = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    method.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[self_parameter, *signature.parameters.values()], return_annotation=str
    )
    method.__annotations__ = {**tool.parameters, "return": str}
    method.__doc__ = tool.fn.__doc__
    method.__name__ = method.__qualname__ = tool.name
    return method


def live_environment_factory(
    items: Sequence[TaskItem], tools: Sequence[ToolOfYours] = (), wiki: WikiView = TITLED_PAGES
) -> Callable[[], LiveEnvironment]:
    """TRL's `environment_factory` for episodes of `items` (with `tools` of yours): each environment it builds serves
    any row whose `item_id` is one of theirs. Raises ValueError when two items share an id."""
    pool: dict[str, TaskItem] = {}
    for item in items:
        if item.id in pool:
            raise ValueError(f"two items share the id {item.id!r}: a live episode's row names its item by id")
        pool[item.id] = item

    cls = live_environment_class(tools, wiki)

    def factory() -> LiveEnvironment:
        return cls(pool)

    return factory
