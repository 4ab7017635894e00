"""The final answer a visible reply gives, and whether it matches the gold one, per task.

The final answer is the last of: an `Answer: …` line, a `\\boxed{…}`, a `#### …` line (GSM8K's own
solution format). Matching:
- GSM8K: equivalence through HF's `math-verify` where both sides parse; otherwise the first number of
  each (commas and `$` ignored), as decimals.
- HotpotQA: exact match and token F1 after the official answer normalization (lowercase, no
  punctuation, no articles, single spaces); yes/no/noanswer match only exactly, as the official
  evaluation script has it.
- StrategyQA: the same yes/no (true/false accepted).
"""

from __future__ import annotations

import logging
import re
import string
import threading
from collections import Counter
from decimal import Decimal, InvalidOperation

import msgspec

# An answer line, allowing the markdown models like to add: "**Answer:** 42", "> Answer: 42".
_ANSWER_LINE = re.compile(r"^[\s>*_#`-]*answer[\s*_`]*:(.*)$", re.IGNORECASE)
_HASH_LINE = re.compile(r"^\s*####\s*(.*?)\s*$")
_BOXED = "\\boxed{"
_TEXT_WRAPPER = re.compile(r"^\\text\{(.*)\}$")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = set(string.punctuation)
_EXACT_ONLY = ("yes", "no", "noanswer")


class FinalAnswer(msgspec.Struct, frozen=True):
    text: str
    line: int  # index of the line (of the text searched) that carries it
    boxed: bool


def final_answer(text: str) -> FinalAnswer | None:
    """The last final-answer marker in `text` (by position); None if there is none or it is empty."""
    found: list[tuple[int, int, FinalAnswer]] = []
    for index, line in enumerate(text.splitlines()):
        for match in (_ANSWER_LINE.match(line), _HASH_LINE.match(line)):
            if match:
                answer = match.group(1).strip().strip("*_`").strip()
                if answer:
                    found.append((index, match.start(1), FinalAnswer(answer, index, False)))
        start = line.find(_BOXED)
        while start >= 0:
            inner = _braced(line, start + len(_BOXED))
            if inner is not None and inner.strip():
                found.append((index, start, FinalAnswer(_unwrap(inner.strip()), index, True)))
            start = line.find(_BOXED, start + 1)
    return max(found, key=lambda f: (f[0], f[1]))[2] if found else None


def _braced(line: str, start: int) -> str | None:
    depth = 1
    for position in range(start, len(line)):
        depth += {"{": 1, "}": -1}.get(line[position], 0)
        if depth == 0:
            return line[start:position]
    return None


def _unwrap(inner: str) -> str:
    match = _TEXT_WRAPPER.match(inner)
    return match.group(1).strip() if match else inner


def normalize_answer(text: str) -> str:
    """HotpotQA's official answer normalization."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def token_f1(prediction: str, gold: str) -> float:
    """HotpotQA's official token F1."""
    predicted, expected = normalize_answer(prediction), normalize_answer(gold)
    if (predicted in _EXACT_ONLY or expected in _EXACT_ONLY) and predicted != expected:
        return 0.0
    common = Counter(predicted.split()) & Counter(expected.split())
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = same / len(predicted.split()), same / len(expected.split())
    return 2 * precision * recall / (precision + recall)


def number(text: str) -> Decimal | None:
    """The first number in `text`, ignoring `$` and thousands commas: "$1,234.00" -> 1234.00."""
    match = _NUMBER.search(text.replace(",", "").replace("$", ""))
    if not match:
        return None
    try:
        return Decimal(match.group())
    except InvalidOperation:
        return None


def math_match(answer: FinalAnswer, gold: str) -> bool:
    from math_verify import parse, verify

    # math-verify times out through signal.alarm, which only the main thread may use (as in trl.rewards).
    main = threading.current_thread() is threading.main_thread()
    if not main:
        logging.getLogger("math_verify").setLevel(logging.ERROR)
    timeout = 5 if main else None
    expected = parse(gold, parsing_timeout=timeout)
    predicted = parse(f"${_BOXED}{answer.text}}}$" if answer.boxed else answer.text, parsing_timeout=timeout)
    if expected and predicted:
        return bool(verify(expected, predicted, timeout_seconds=timeout))
    want, got = number(gold), number(answer.text)
    if want is None or got is None:
        return normalize_answer(answer.text) == normalize_answer(gold)
    return want == got


def yes_no(text: str) -> str:
    words = normalize_answer(text).split()
    first = words[0] if words else ""
    return {"true": "yes", "false": "no"}.get(first, first)


def yes_no_match(answer: str, gold: str) -> bool:
    predicted = yes_no(answer)
    return predicted in ("yes", "no") and predicted == yes_no(gold)
