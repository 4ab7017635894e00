"""Your reward functions (`reward.functions`): Python functions written for TRL, each one more reward component.

A function is named `package.module:function` and imported with the config file's folder first on the import
path (so `my_rewards.py` beside the config is found). It is called as TRL calls a reward function, once per scored
batch:

    fn(prompts=[...], completions=[...], completion_tokens=[...], <column>=[...], ...) -> list[float | None]

`prompts` are exactly what the policy was shown, `completions` the decoded completions (thinking included), and
each column of the items is a keyword argument holding one value per completion: `id`, `task`, `question`,
`context`, `answer`, `difficulty`, `needs_clarification`. A function that takes `**kwargs` (as TRL's examples do)
ignores what it does not use. It returns one number per completion, in [-1, 1]; None means "not applicable to this
completion" and counts 0, as TRL's nansum counts it.

Its source file's sha256 is part of the config's fingerprint (rc1/config.py), so an edit after round 2 invalidates
the gate. A function that raises, or answers with something else than the documented list, fails the run (exit 1,
its traceback in the ERROR report): a silent 0 would train on a reward nobody wrote.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import msgspec

from rc1.data.task import TaskItem

LOW, HIGH = -1.0, 1.0  # the documented range of a function's answers
COLUMNS = ("id", "task", "question", "context", "answer", "difficulty", "needs_clarification")


class RewardFunctionFailed(Exception):
    """A reward function raised, or answered outside its contract, while a batch was scored."""


class FunctionRef(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    module: str
    attribute: str


def parse_path(path: str) -> tuple[str, str] | None:
    """`package.module:function` split in two, or None where it is not of that form."""
    module, colon, attribute = path.partition(":")
    if not colon or not module or not attribute or not all(part.isidentifier() for part in module.split(".")) \
            or not all(part.isidentifier() for part in attribute.split(".")):
        return None
    return module, attribute


@contextlib.contextmanager
def _import_path(folder: Path):
    sys.path.insert(0, str(folder))
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(str(folder))


def source_file(path: str, folder: Path) -> Path | None:
    """The file the function's module is read from, found without running it (None: not found)."""
    parsed = parse_path(path)
    if parsed is None:
        return None
    with _import_path(folder):
        try:
            spec = importlib.util.find_spec(parsed[0])
        except (ImportError, ValueError):
            return None
    return Path(spec.origin) if spec is not None and spec.origin and Path(spec.origin).is_file() else None


def load_function(path: str, folder: Path) -> Callable:
    """Import `package.module:function` (the config's folder first on the path). Raises ImportError or
    AttributeError with what went wrong; the round-1 check reports it."""
    parsed = parse_path(path)
    if parsed is None:
        raise ImportError(f"{path!r} is not of the form package.module:function")
    module_name, attribute = parsed
    with _import_path(folder):
        module = importlib.import_module(module_name)
    target = module
    for part in attribute.split("."):
        target = getattr(target, part)
    if not callable(target):
        raise TypeError(f"{path} is a {type(target).__name__}, not a function")
    return target


def call(name: str, fn: Callable, items: Sequence[TaskItem], completions: Sequence[str],
         completion_tokens: Sequence[int]) -> list[float]:
    """One function's answers for a batch, each a finite number in [LOW, HIGH] (None read as 0). Anything else, or
    an exception, is RewardFunctionFailed naming the function and the item."""
    columns = {column: [getattr(item, column) for item in items] for column in COLUMNS}
    try:
        answers = fn(prompts=[item.prompt for item in items], completions=list(completions),
                     completion_tokens=list(completion_tokens), **columns)
    except Exception as e:
        raise RewardFunctionFailed(f"reward function {name} raised {type(e).__name__}: {e}") from e
    if not isinstance(answers, (list, tuple)) or len(answers) != len(items):
        got = f"{len(answers)} values" if isinstance(answers, (list, tuple)) else type(answers).__name__
        raise RewardFunctionFailed(f"reward function {name} answered {got} for {len(items)} completions; it must "
                                   f"return one number (or None) per completion")
    values = []
    for item, answer in zip(items, answers):
        if answer is None:
            values.append(0.0)
            continue
        if isinstance(answer, bool) or not isinstance(answer, (int, float)) or not math.isfinite(answer) \
                or not LOW <= answer <= HIGH:
            raise RewardFunctionFailed(f"reward function {name} answered {answer!r} for item {item.id}; it must be "
                                       f"a finite number in [{LOW:g}, {HIGH:g}] or None")
        values.append(float(answer))
    return values


class RewardFunctions:
    """The run's reward functions, imported once, scored batch by batch beside the rule components."""

    def __init__(self, functions: dict[str, Callable]):
        self.functions = functions

    @classmethod
    def of(cls, specs, folder: Path) -> RewardFunctions:
        return cls({spec.name: load_function(spec.path, folder) for spec in specs})

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.functions)

    def score(self, items: Sequence[TaskItem], completions: Sequence[str],
              completion_tokens: Sequence[int]) -> dict[str, list[float]]:
        return {name: call(name, fn, items, completions, completion_tokens) for name, fn in self.functions.items()}
