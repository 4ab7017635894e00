"""The rule scorer: verifiable components in [0, 1] for one completion of one item.

- correctness: the visible reply's final answer matches the gold one (rc1/scoring/answers.py).
- f1: HotpotQA's token F1 of that answer; for GSM8K and StrategyQA, whose answers are a number or
  yes/no, it equals correctness. Each task is checked its own way (rc1/core/catalog.py `BUILTIN_CHECKS`; a task of
  yours by its `check`: math, exact, yes_no, f1, or one of your reward functions, clipped to [0, 1]).
- format: the thinking closed exactly once (TRL's `think_format_reward`, with thinking on) and the
  visible reply ends on its final answer.
- length: 1 + the DAPO soft overlong penalty over completion tokens (TRL's
  `get_soft_overlong_punishment`): 1 up to max_completion_tokens − cache, falling linearly to 0 at
  max_completion_tokens (a cut-off completion).

An under-specified item (`needs_clarification`) is answered correctly by a clarification: correctness
(and f1) is 1 when the visible reply asks a question and gives no final answer, and format is 1 when
its last line is that question. A completion whose thinking never closed has no visible reply and
scores 0 on everything but length.
"""

from __future__ import annotations

from collections.abc import Callable

from rc1.core.catalog import BUILTIN_CHECKS, CHECK_KINDS, RULE_COMPONENTS  # noqa: F401 (re-exported)
from rc1.data.task import TaskItem
from rc1.scoring.answers import final_answer, math_match, normalize_answer, token_f1, yes_no_match
from rc1.scoring.thinking import OPEN, Reply, split_reply

_CLOSERS = "\"')]}»”’*_`"
CLARIFICATION = "Could you share the details this question depends on?"


def gold_reply(item: TaskItem) -> str:
    """The visible reply that scores full marks: the final answer, or one clarification question."""
    return CLARIFICATION if item.needs_clarification else f"Answer: {item.answer}"


def as_completion(visible: str, thinking: bool) -> str:
    """A completion the policy could give: with thinking on, reasoning closed by `</think>` first."""
    return f"Let me work through it.\n</think>\n\n{visible}" if thinking else visible


class RuleScorer:
    """Scores with thinking-aware parsing; `max_completion_tokens` and `overlong_cache` set the length zone."""

    components = RULE_COMPONENTS

    def __init__(
        self,
        *,
        thinking: bool,
        max_completion_tokens: int,
        overlong_cache: int,
        checks: dict[str, str] | None = None,
        check_function: Callable[[str], Callable] | None = None,
    ):
        """`checks`: how each task of yours is checked (a CheckKind, or a reward function's name, which
        `check_function` imports when it is first needed)."""
        from trl.rewards import get_soft_overlong_punishment, think_format_reward

        if not 0 < overlong_cache <= max_completion_tokens:
            raise ValueError(f"overlong cache {overlong_cache} must be in (0, {max_completion_tokens}]")
        self.thinking = thinking
        self.checks = {**BUILTIN_CHECKS, **(checks or {})}
        self._check_function = check_function
        self._functions: dict[str, Callable] = {}
        self._overlong = get_soft_overlong_punishment(max_completion_tokens, overlong_cache)
        self._think_format = think_format_reward

    def reply(self, completion: str) -> Reply:
        return split_reply(completion, self.thinking)

    def score(
        self, item: TaskItem, completion: str, completion_tokens: int, checked: float | None = None
    ) -> dict[str, float]:
        """`checked`: where the item's task is checked by a reward function, its answer for this completion when
        the caller already has it (the pipeline scores every function once per batch), so it is not asked twice."""
        reply = self.reply(completion)
        # TRL's penalty reads only the length of each token list.
        length = 1.0 + self._overlong(completion_ids=[range(completion_tokens)])[0]
        if reply.visible is None:
            return {"correctness": 0.0, "f1": 0.0, "format": 0.0, "length": length}
        lines = [line for line in reply.visible.splitlines() if line.strip()]
        answer = final_answer(reply.visible)
        if item.needs_clarification:
            correct = float(clarification_count(reply.visible) >= 1 and answer is None)
            ends_well = bool(lines) and lines[-1].rstrip().rstrip(_CLOSERS).endswith("?")
            return {
                "correctness": correct,
                "f1": correct,
                "format": float(ends_well and self._well_thought(completion)),
                "length": length,
            }
        kind = self.check_of(item.task)
        if kind in CHECK_KINDS:
            correct, f1 = self._match(kind, item, answer)
        else:  # one of your reward functions decides, on the whole completion
            if checked is None:
                checked = self._by_function(kind, item, completion, completion_tokens)
            correct = f1 = min(1.0, max(0.0, checked))
        ends_well = answer is not None and answer.line == len(reply.visible.splitlines()) - 1  # visible is stripped
        return {
            "correctness": correct,
            "f1": f1,
            "format": float(ends_well and self._well_thought(completion)),
            "length": length,
        }

    def _well_thought(self, completion: str) -> bool:
        if not self.thinking:
            return OPEN not in completion or "</think>" in completion
        return self._think_format([[{"content": OPEN + completion}]])[0] == 1.0

    def check_of(self, task: str) -> str:
        """How the task's answers are checked: a CheckKind, or the name of the reward function that checks them."""
        return self.checks.get(task, "exact")

    def _by_function(self, name: str, item: TaskItem, completion: str, completion_tokens: int) -> float:
        from rc1.scoring.functions import call

        if name not in self._functions:
            if self._check_function is None:
                raise ValueError(f"task {item.task} is checked by reward function {name}, which this scorer lacks")
            self._functions[name] = self._check_function(name)
        return call(self._functions[name], [item], [completion], [completion_tokens])[0]

    @staticmethod
    def _match(kind: str, item: TaskItem, answer) -> tuple[float, float]:
        if answer is None:
            return 0.0, 0.0
        if kind == "math":
            correct = float(math_match(answer, item.answer))
            return correct, correct
        if kind == "yes_no":
            correct = float(yes_no_match(answer.text, item.answer))
            return correct, correct
        exact = float(normalize_answer(answer.text) == normalize_answer(item.answer))
        return exact, (token_f1(answer.text, item.answer) if kind == "f1" else exact)


def clarification_count(visible: str | None) -> int:
    """Sentences of the visible reply that end in `?`; thinking asks nobody anything, so it never counts."""
    from rc1.data.text import SENTENCE_BREAK

    if not visible:
        return 0
    sentences = (s.strip().rstrip(_CLOSERS) for s in SENTENCE_BREAK.split(visible))
    return sum(1 for s in sentences if s.endswith("?") and any(ch.isalnum() for ch in s))
