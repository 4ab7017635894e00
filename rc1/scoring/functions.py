"""Your reward functions (`reward.functions`): functions written for TRL, TRL's own (`trl.rewards`) among them, each
one more reward component, called once per scored batch as TRL's GRPOTrainer calls a reward function:

    fn(prompts=[...], completions=[...], completion_ids=[...], trainer_state=..., log_extra=..., log_metric=...,
       completion_tokens=[...], <column>=[...], ...) -> list[float | None]

Format (`format`, per function). `conversational`, the default, is what TRL hands a function when the policy is a
chat model, as rc1's is: each prompt is the episode's messages (system, user, assistant, tool) and each completion
`[{"role": "assistant", "content": text}]`. `text` hands strings: the prompt as rendered (`item.prompt`) and the
completion. The completion is the decoded completion, thinking included.

Columns. Each column of the items is a keyword argument holding one value per completion (`id`, `task`, `question`,
`context`, `answer`, `difficulty`, `needs_clarification`), and `reward.columns` gives a column another name too
(`{solution: answer}` for `trl.rewards:accuracy_reward`). `completion_ids` are the policy's token ids of each
completion where the batch has them (training, and rescoring from an archive that kept them: it keeps them for a
function that names `completion_ids` in its signature), else the completion re-encoded by the policy's tokenizer
(`rc1 score`, the probe); `trainer_state` has `global_step` and `max_steps` (None outside training); `log_extra` and
`log_metric` take what a function logs (TRL's completions table and metrics), kept with the batch's scores.

A function is `package.module:function`, imported with the config file's folder first on the import path; with
`kwargs` the path names a factory called once with them (`trl.rewards:get_soft_overlong_punishment`). An `async def`
function (or callable) is awaited: every async function of a batch runs concurrently on one event loop, within
`reward.function_timeout_s`. A function that takes `**kwargs` (as TRL's do) ignores what it does not use. It returns
one number per completion; None means "not applicable to this completion" and counts 0. Each answer is divided by
`scale`, then must lie in [-1, 1] (with `clip`, it is clipped there).

Its source's sha256 (a factory's arguments too) is part of the config's fingerprint (rc1/core/named_files.py), so an
edit after round 2 invalidates the gate. A function that raises, times out, or answers with something else than
the documented list fails the run (exit 1, its traceback in the ERROR report): a silent 0 would train on a reward
nobody wrote.
"""

from __future__ import annotations

import asyncio
import inspect
import math
from collections.abc import Callable, Sequence
from pathlib import Path

import msgspec

from rc1.core.catalog import ITEM_COLUMNS
from rc1.core.user_code import load_function
from rc1.data.task import TaskItem, episode_messages

LOW, HIGH = -1.0, 1.0  # the documented range of a function's answers (after `scale`)
COLUMNS = ITEM_COLUMNS


class RewardFunctionFailed(Exception):
    """A reward function raised, timed out, or answered outside its contract, while a batch was scored."""


class StepState(msgspec.Struct, frozen=True, kw_only=True):
    """What a function reads of `trainer_state` (TRL hands it the trainer's TrainerState): the optimizer steps done
    before this batch was sampled, and the run's total."""

    global_step: int
    max_steps: int


class BatchContext(msgspec.Struct, kw_only=True):
    """What TRL passes a function beside prompts, completions and columns, for one scored batch."""

    completion_ids: list[list[int]] | None = None  # the policy's token ids of each completion
    trainer_state: StepState | None = None
    encode: Callable[[str], list[int]] | None = None  # the policy's tokenizer, where the ids were not kept
    # What the functions logged: log_extra's columns (one value per completion) and log_metric's values, by name.
    extra: dict[str, list] = msgspec.field(default_factory=dict)
    metrics: dict[str, list[float]] = msgspec.field(default_factory=dict)

    def ids_for(self, completions: Sequence[str]) -> list[list[int]] | None:
        if self.completion_ids is not None:
            return self.completion_ids
        return [self.encode(text) for text in completions] if self.encode is not None else None

    def log_extra(self, column: str, values: list) -> None:
        self.extra[column] = list(values)

    def log_metric(self, name: str, value: float) -> None:
        self.metrics.setdefault(name, []).append(float(value))


def token_ids_of(tokenizer) -> Callable[[str], list[int]]:
    """A completion's ids as the policy's tokenizer encodes its text (no special tokens added): what a function gets
    as completion_ids where the batch did not keep the sampled ones (evaluations, `rc1 score`)."""
    return lambda text: list(tokenizer(text, add_special_tokens=False)["input_ids"])


class RewardFunction:
    """One configured function (its spec and the callable it names, a factory's product where it has `kwargs`)."""

    def __init__(self, spec, fn: Callable, columns: dict[str, str] | None = None):
        self.spec = spec
        self.name = spec.name
        self.fn = fn
        self.columns = dict(columns or {})
        self.is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(type(fn).__call__)
        self.reads_ids = _names_parameter(fn, "completion_ids")

    @classmethod
    def load(cls, spec, folder: Path, columns: dict[str, str] | None = None) -> RewardFunction:
        target = load_function(spec.path, folder)
        if spec.kwargs is not None:
            try:
                target = target(**spec.kwargs)
            except Exception as e:
                raise RewardFunctionFailed(
                    f"reward function {spec.name}: the factory {spec.path} raised {type(e).__name__}: {e} when called "
                    f"with {spec.kwargs}"
                ) from e
            if not callable(target):
                raise RewardFunctionFailed(
                    f"reward function {spec.name}: the factory {spec.path} made a {type(target).__name__}, not a "
                    "function"
                )
        return cls(spec, target, columns)

    def arguments(
        self, items: Sequence[TaskItem], completions: Sequence[str], completion_tokens: Sequence[int], context
    ) -> dict:
        """The keyword arguments TRL would hand the function for this batch."""
        if self.spec.format == "conversational":
            prompts = [episode_messages(item) for item in items]
            shown = [[{"role": "assistant", "content": text}] for text in completions]
        else:
            prompts, shown = [item.prompt for item in items], list(completions)
        columns = {column: [getattr(item, column) for item in items] for column in COLUMNS}
        columns.update({alias: columns[column] for alias, column in self.columns.items()})
        return dict(
            prompts=prompts,
            completions=shown,
            completion_ids=context.ids_for(completions),
            completion_tokens=list(completion_tokens),
            trainer_state=context.trainer_state,
            log_extra=context.log_extra,
            log_metric=context.log_metric,
            **columns,
        )

    def answers(self, items: Sequence[TaskItem], raw) -> list[float]:
        """The function's raw answers checked and brought into [-1, 1] as its spec says."""
        return bounded(self.spec, items, raw)


def bounded(spec, items: Sequence[TaskItem], raw) -> list[float]:
    """A component's raw answers (a function's, a reward model's logits) checked and brought into [-1, 1] as its
    spec says: one per completion, None read as 0, each divided by `scale`, then clipped (`clip`) or refused."""
    name = spec.name
    if not isinstance(raw, (list, tuple)) or len(raw) != len(items):
        got = f"{len(raw)} values" if isinstance(raw, (list, tuple)) else type(raw).__name__
        raise RewardFunctionFailed(
            f"reward function {name} answered {got} for {len(items)} completions; it must "
            f"return one number (or None) per completion"
        )
    values = []
    for item, answer in zip(items, raw):
        if answer is None:
            values.append(0.0)
            continue
        if isinstance(answer, bool) or not isinstance(answer, (int, float)) or not math.isfinite(answer):
            raise RewardFunctionFailed(
                f"reward function {name} answered {answer!r} for item {item.id}; it must be a finite number or None"
            )
        value = float(answer) / spec.scale
        if spec.clip:
            value = min(HIGH, max(LOW, value))
        elif not LOW <= value <= HIGH:
            scaled = f" ({answer!r} / scale {spec.scale:g})" if spec.scale != 1.0 else ""
            raise RewardFunctionFailed(
                f"reward function {name} answered {value!r}{scaled} for item {item.id}; it must lie in "
                f"[{LOW:g}, {HIGH:g}]: set its scale (answers are divided by it) or clip: true"
            )
        values.append(value)
    return values


def call(
    function: RewardFunction,
    items: Sequence[TaskItem],
    completions: Sequence[str],
    completion_tokens: Sequence[int],
    context: BatchContext | None = None,
    timeout_s: float = 60.0,
) -> list[float]:
    """One function's answers for a batch (see `score_all`)."""
    return score_all([function], items, completions, completion_tokens, context, timeout_s)[function.name]


def score_all(
    functions: Sequence[RewardFunction],
    items: Sequence[TaskItem],
    completions: Sequence[str],
    completion_tokens: Sequence[int],
    context: BatchContext | None = None,
    timeout_s: float = 60.0,
) -> dict[str, list[float]]:
    """Every function's answers for a batch, each a finite number in [-1, 1]: the synchronous ones one after
    another, the async ones together on one event loop within `timeout_s`. An exception, a timeout or an answer
    out of contract is RewardFunctionFailed naming the function (and the item)."""
    context = context if context is not None else BatchContext()
    raw: dict[str, object] = {}
    waiting = []
    for function in functions:
        arguments = function.arguments(items, completions, completion_tokens, context)
        if function.is_async:
            waiting.append((function, arguments))
            continue
        try:
            raw[function.name] = function.fn(**arguments)
        except Exception as e:
            raise RewardFunctionFailed(f"reward function {function.name} raised {type(e).__name__}: {e}") from e
    if waiting:
        raw.update(asyncio.run(_awaited(waiting, timeout_s)))
    return {function.name: function.answers(items, raw[function.name]) for function in functions}


async def _awaited(waiting, timeout_s: float) -> dict[str, object]:
    async def one(function: RewardFunction, arguments: dict):
        try:
            return function.name, await asyncio.wait_for(function.fn(**arguments), timeout_s)
        except asyncio.TimeoutError:  # TimeoutError itself from Python 3.11 on
            raise RewardFunctionFailed(
                f"reward function {function.name} did not answer within reward.function_timeout_s ({timeout_s:g} s)"
            ) from None
        except RewardFunctionFailed:
            raise
        except Exception as e:
            raise RewardFunctionFailed(f"reward function {function.name} raised {type(e).__name__}: {e}") from e

    return dict(await asyncio.gather(*(one(function, arguments) for function, arguments in waiting)))


def _names_parameter(fn: Callable, name: str) -> bool:
    """Whether `fn` (or its __call__) takes `name` as a parameter of its own (not only through **kwargs)."""
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


class RewardFunctions:
    """The run's reward functions, imported once, scored batch by batch beside the rule components."""

    def __init__(self, functions: Sequence[RewardFunction], timeout_s: float = 60.0):
        self.functions = list(functions)
        self.timeout_s = timeout_s

    @classmethod
    def of(cls, reward, folder: Path) -> RewardFunctions:
        """The functions of a `reward` section (its functions with a path; reward models are scored apart)."""
        return cls(
            [RewardFunction.load(spec, folder, reward.columns) for spec in reward.functions if spec.path is not None],
            reward.function_timeout_s,
        )

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(function.name for function in self.functions)

    @property
    def read_ids(self) -> bool:
        """Whether a function names completion_ids: the archive then keeps each completion's token ids."""
        return any(function.reads_ids for function in self.functions)

    def score(
        self,
        items: Sequence[TaskItem],
        completions: Sequence[str],
        completion_tokens: Sequence[int],
        context: BatchContext | None = None,
    ) -> dict[str, list[float]]:
        return score_all(self.functions, items, completions, completion_tokens, context, self.timeout_s)
