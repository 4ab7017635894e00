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

Its source's sha256 is part of the config's fingerprint (rc1/core/named_files.py), so an edit after round 2 invalidates
the gate. A function that raises, or answers with something else than the documented list, fails the run (exit 1,
its traceback in the ERROR report): a silent 0 would train on a reward nobody wrote.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path

from rc1.core.user_code import load_function
from rc1.data.task import TaskItem

LOW, HIGH = -1.0, 1.0  # the documented range of a function's answers
COLUMNS = ("id", "task", "question", "context", "answer", "difficulty", "needs_clarification")


class RewardFunctionFailed(Exception):
    """A reward function raised, or answered outside its contract, while a batch was scored."""


def call(
    name: str, fn: Callable, items: Sequence[TaskItem], completions: Sequence[str], completion_tokens: Sequence[int]
) -> list[float]:
    """One function's answers for a batch, each a finite number in [LOW, HIGH] (None read as 0). Anything else, or
    an exception, is RewardFunctionFailed naming the function and the item."""
    columns = {column: [getattr(item, column) for item in items] for column in COLUMNS}
    try:
        answers = fn(
            prompts=[item.prompt for item in items],
            completions=list(completions),
            completion_tokens=list(completion_tokens),
            **columns,
        )
    except Exception as e:
        raise RewardFunctionFailed(f"reward function {name} raised {type(e).__name__}: {e}") from e
    if not isinstance(answers, (list, tuple)) or len(answers) != len(items):
        got = f"{len(answers)} values" if isinstance(answers, (list, tuple)) else type(answers).__name__
        raise RewardFunctionFailed(
            f"reward function {name} answered {got} for {len(items)} completions; it must "
            f"return one number (or None) per completion"
        )
    values = []
    for item, answer in zip(items, answers):
        if answer is None:
            values.append(0.0)
            continue
        if (
            isinstance(answer, bool)
            or not isinstance(answer, (int, float))
            or not math.isfinite(answer)
            or not LOW <= answer <= HIGH
        ):
            raise RewardFunctionFailed(
                f"reward function {name} answered {answer!r} for item {item.id}; it must be "
                f"a finite number in [{LOW:g}, {HIGH:g}] or None"
            )
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

    def score(
        self, items: Sequence[TaskItem], completions: Sequence[str], completion_tokens: Sequence[int]
    ) -> dict[str, list[float]]:
        return {name: call(name, fn, items, completions, completion_tokens) for name, fn in self.functions.items()}
