"""The rule scorer: three components in [0, 1] for one completion of one item.

- correctness: the final answer matches the gold one — GSM8K: the same number (commas, `$`, a
  trailing `.0` or unit words do not matter); HotpotQA: exact match after the official answer
  normalization (lowercase, no punctuation, no articles, single spaces); StrategyQA: the same yes/no
  (true/false accepted).
- format: the completion ends with an `Answer: ...` line.
- brevity: 1 - len(completion) / max_completion_chars, floored at 0; continuous, so shorter is always
  a little better.

An under-specified item (`needs_clarification`) is answered correctly by one clarification: correctness
is 1 when the visible reply asks a question and gives no `Answer:` line, and format is 1 when its last
line is that question.
"""

from __future__ import annotations

import re
import string
from decimal import Decimal, InvalidOperation

from rc1.data.task import TaskItem

# An answer line, allowing the markdown models like to add: "**Answer:** 42", "> Answer: 42".
_ANSWER_LINE = re.compile(r"^[\s>*_#`-]*answer[\s*_`]*:(.*)$", re.IGNORECASE)
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = set(string.punctuation)


def extract_answer(completion: str) -> str | None:
    """The text after the last `Answer:` line's colon, without markup; None if there is none or it is empty."""
    for line in reversed(completion.splitlines()):
        match = _ANSWER_LINE.match(line)
        if match:
            answer = match.group(1).strip().strip("*_`").strip()
            return answer or None
    return None


def score(item: TaskItem, completion: str, max_completion_chars: int = 400) -> dict[str, float]:
    if max_completion_chars <= 0:
        raise ValueError(f"max_completion_chars must be positive, got {max_completion_chars}")
    answer = extract_answer(completion)
    lines = [line for line in completion.splitlines() if line.strip()]
    if item.needs_clarification:
        from rc1.scoring.reward import clarification_count

        asks = clarification_count(completion) >= 1
        return {
            "correctness": 1.0 if asks and answer is None else 0.0,
            "format": 1.0 if lines and lines[-1].rstrip().rstrip("\"')*_`").endswith("?") else 0.0,
            "brevity": 1.0 - min(len(completion) / max_completion_chars, 1.0),
        }
    ends_with_answer = bool(lines) and extract_answer(lines[-1]) is not None
    return {
        "correctness": 1.0 if answer is not None and _MATCHERS[item.task](answer, item.answer) else 0.0,
        "format": 1.0 if ends_with_answer else 0.0,
        "brevity": 1.0 - min(len(completion) / max_completion_chars, 1.0),
    }


def number(text: str) -> Decimal | None:
    """The first number in `text`, ignoring `$` and thousands commas: "$1,234.00" -> 1234.00."""
    match = _NUMBER.search(text.replace(",", "").replace("$", ""))
    if not match:
        return None
    try:
        return Decimal(match.group())
    except InvalidOperation:
        return None


def normalize_answer(text: str) -> str:
    """HotpotQA's official answer normalization."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def _numeric_match(answer: str, gold: str) -> bool:
    predicted, expected = number(answer), number(gold)
    if predicted is None or expected is None:
        return normalize_answer(answer) == normalize_answer(gold)
    return predicted == expected


def _yes_no(text: str) -> str:
    words = normalize_answer(text).split()
    first = words[0] if words else ""
    return {"true": "yes", "false": "no"}.get(first, first)


def _yes_no_match(answer: str, gold: str) -> bool:
    predicted = _yes_no(answer)
    return predicted in ("yes", "no") and predicted == _yes_no(gold)


_MATCHERS = {
    "gsm8k": _numeric_match,
    "hotpotqa": lambda answer, gold: normalize_answer(answer) == normalize_answer(gold),
    "strategyqa": _yes_no_match,
}
