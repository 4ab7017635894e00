"""Your tools (`data.tools_of_yours`, issue 43): a Python function a config names becomes one more tool of a live
episode, beside `wiki`, `calc` and `ask`.

The contract: the function takes only typed arguments (`str`, `int`, `float`, `bool`), returns a `str`, and is
deterministic (same arguments, same result: `audit --rescore` replays each recorded call and an exact resume trains on
the same results). Its JSON schema is the one TRL renders: transformers' `get_json_schema`, from the type hints and
the Google-style docstring (a description, and an `Args:` line per argument).

`load_tools` imports each (the config's folder first on the import path, as `reward.functions`) and builds its
schema; what is wrong is a path-qualified message (`data.tools_of_yours[0].path: …`), which `load_config` raises as a
config error (exit 2). A call runs on a daemon worker thread joined with `timeout_s`: a function that raises, or does
not return within it, is `ToolOfYoursFailed` naming the tool, which fails the batch being trained or evaluated
(exit 1, as `RewardFunctionFailed`). A hung thread cannot be killed: it is left behind, and the process exits with
the named error.
"""

from __future__ import annotations

import inspect
import threading
import typing
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec

from rc1.config.rules import RESERVED_TOOL_NAMES
from rc1.core.user_code import load_function

ARGUMENT_TYPES = (str, int, float, bool)
BUILT_IN = ("wiki", "calc", "ask")
RESERVED = RESERVED_TOOL_NAMES  # TRL's environment methods that are not tools, and the built-in tools


class ToolOfYoursFailed(Exception):
    """A tool of yours raised, did not return within its `timeout_s`, or returned something other than a str, while a
    live episode was played (training, an evaluation, a replay). Exit 1: the batch fails by the tool's name."""


class ToolOfYours(msgspec.Struct, frozen=True, kw_only=True):
    """One loaded tool: its name, the function, its parameters in order with their types, and its schema."""

    name: str
    path: str
    timeout_s: float
    fn: Callable[..., str]
    parameters: dict[str, type]
    schema: dict[str, Any]

    def run(self, arguments: Mapping[str, Any]) -> str:
        """The function called with `arguments` on a worker thread, within `timeout_s`; ToolOfYoursFailed otherwise."""
        box: dict[str, Any] = {}

        def work() -> None:
            try:
                box["result"] = self.fn(**arguments)
            except BaseException as e:  # noqa: BLE001 — carried to the caller, which names the tool
                box["error"] = e

        worker = threading.Thread(target=work, name=f"rc1-tool-{self.name}", daemon=True)
        worker.start()
        worker.join(self.timeout_s)
        if worker.is_alive():
            raise ToolOfYoursFailed(
                f"tool {self.name} ({self.path}) did not return within {self.timeout_s:g} s "
                f"(data.tools_of_yours timeout_s) when called with {dict(arguments)!r}"
            )
        if "error" in box:
            e = box["error"]
            raise ToolOfYoursFailed(
                f"tool {self.name} ({self.path}) raised {type(e).__name__}: {e} when called with {dict(arguments)!r}"
            ) from e
        result = box["result"]
        if not isinstance(result, str):
            raise ToolOfYoursFailed(
                f"tool {self.name} ({self.path}) returned {type(result).__name__} {result!r}, not a str, when called "
                f"with {dict(arguments)!r}"
            )
        return result

    def malformed(self, arguments: object) -> str:
        """Why `arguments` (as the model wrote them) are not a call of this tool, or "" when they are."""
        if not isinstance(arguments, dict) or set(arguments) != set(self.parameters):
            return f"{self.name} takes {', '.join(self.parameters) or 'no arguments'}"
        for key, kind in self.parameters.items():
            value = arguments[key]
            fits = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
            if kind is float:
                fits = isinstance(value, (int, float)) and not isinstance(value, bool)
            if not fits:
                return f"{self.name}'s {key} is a {kind.__name__}"
        return ""


def tools_of(loaded) -> tuple[ToolOfYours, ...]:
    """The run's tools of yours (`loaded.config.data.tools_of_yours`), imported; BadInput (exit 2, path-qualified)
    where one no longer imports or has no schema (`load_config` refused it then already)."""
    from rc1.core.errors import BadInput

    specs = loaded.config.data.tools_of_yours
    if not specs:
        return ()
    tools, problems = load_tools(specs, loaded.path.parent)
    if problems:
        raise BadInput("\n".join(f"{loaded.path}: {p}" for p in problems))
    return tools


def load_tools(specs: Sequence[Any], folder: Path) -> tuple[tuple[ToolOfYours, ...], list[str]]:
    """Each `data.tools_of_yours` entry imported and its schema built, and the problems found (path-qualified)."""
    tools, problems = [], []
    for index, spec in enumerate(specs):
        where = f"data.tools_of_yours[{index}]"
        try:
            fn = load_function(spec.path, folder)
        except Exception as e:  # the user's module: whatever it raises on import is the finding
            problems.append(f"{where}.path: {spec.path} does not import: {type(e).__name__}: {e}")
            continue
        tool, problem = _tool(spec, fn, where)
        if problem:
            problems.append(problem)
        else:
            tools.append(tool)
    return tuple(tools), problems


def _tool(spec, fn: Callable, where: str) -> tuple[ToolOfYours | None, str]:
    from transformers.utils import get_json_schema

    if not inspect.isfunction(fn) or inspect.iscoroutinefunction(fn):
        return None, f"{where}.path: {spec.path} is not a plain function (def, not async)"
    try:
        hints = typing.get_type_hints(fn)
    except Exception as e:
        return None, f"{where}.path: {spec.path}: its type hints do not resolve: {type(e).__name__}: {e}"
    parameters = {}
    for name, parameter in inspect.signature(fn).parameters.items():
        if parameter.kind not in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY):
            return None, f"{where}.path: {spec.path}: *{name} is not a typed argument; a tool takes named ones only"
        if hints.get(name) not in ARGUMENT_TYPES:
            return None, (
                f"{where}.path: {spec.path}: argument {name} is {hints.get(name, 'untyped')}; a tool's arguments are "
                "str, int, float or bool"
            )
        parameters[name] = hints[name]
    if hints.get("return") is not str:
        return None, f"{where}.path: {spec.path}: annotate its return as str (the text the model reads back)"
    try:
        schema = get_json_schema(fn)
    except Exception as e:  # transformers' DocstringParsingException / TypeHintParsingException
        return None, (
            f"{where}.path: {spec.path}: no tool schema ({type(e).__name__}: {e}); give it a docstring with a "
            "description and an Args: line per argument (Google style)"
        )
    schema = {**schema, "function": {**schema["function"], "name": spec.name}}
    return (
        ToolOfYours(
            name=spec.name, path=spec.path, timeout_s=spec.timeout_s, fn=fn, parameters=parameters, schema=schema
        ),
        "",
    )
