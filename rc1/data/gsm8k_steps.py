"""The arithmetic a generated GSM8K-style item needs, read back from its question: the gold trajectory's `calc` steps.

The generator (`rc1/data/generators/gsm8k.py`) writes a start sentence ("Ana Bel keeps 340 red marbles at …") and one
sentence per operation from fixed templates, with asides (no numbers) between them and the question last. Each
template is turned into a pattern whose number fields and hero are captured, and each sentence is matched in order,
the two-number steps ("3 boxes of 12") first, a match counting only where the hero is who the template names. A
question in no template's form (a loaded GSM8K problem: the loader keeps only its final number, not the worked
solution) has no steps: `None`.
"""

from __future__ import annotations

import re
import string

import msgspec

from rc1.data.generators import MONEY_START, MONEY_STEPS, STOCK_START, STOCK_STEPS

_NUMBER = r"\$?\d[\d,]*"
_FIELDS = {
    "k": f"(?P<k>{_NUMBER})",
    "m": f"(?P<m>{_NUMBER})",
    "v": f"(?P<v>{_NUMBER})",
    "x": "(?P<x>doubles|triples|quadruples)",
    "with": "(?P<with>.+?)",
    "everyone": "(?P<everyone>.+?)",
    "h": "(?P<h>.+?)",
    "a": "(?P<a>.+?)",
    "s": "(?P<s>.+?)",
}
_TIMES = {"doubles": 2, "triples": 3, "quadruples": 4}
_KIND_ORDER = ("add_prod", "sub_prod", "mul", "div", "add", "sub")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


class Steps(msgspec.Struct, frozen=True, kw_only=True):
    """The start value and each operation on the running value, as the tail of a `calc` expression ("+ 4 * 12")."""

    start: int
    operations: list[str]


def _pattern(template: str) -> re.Pattern[str]:
    parts = []
    for literal, field, _, _ in string.Formatter().parse(template):
        parts.append(re.escape(literal))
        if field is not None:
            parts.append(_FIELDS.get(field, ".+?"))
    return re.compile("".join(parts))


def _family(steps: dict, starts: tuple[str, ...]) -> tuple[list[re.Pattern[str]], list[tuple[str, re.Pattern[str]]]]:
    ordered = [(kind, _pattern(t)) for kind in _KIND_ORDER for t in steps[kind][1]]
    return [_pattern(t) for t in starts], ordered


_STOCK = _family(STOCK_STEPS, STOCK_START)
_MONEY = _family(MONEY_STEPS, MONEY_START)


def steps(question: str) -> Steps | None:
    """The operations the question's sentences describe, or None when it is not a generated GSM8K-style question."""
    sentences = [s for s in _SENTENCE.split(question.strip()) if s]
    if not sentences:
        return None
    for (starts, ordered), money in ((_STOCK, False), (_MONEY, True)):
        start = next((m for p in starts if (m := p.fullmatch(sentences[0]))), None)
        if start is None or ("$" in start.group("v")) != money:
            continue
        hero = start.group("h").split()[0]
        operations = [op for sentence in sentences[1:] if (op := _operation(sentence, ordered, hero))]
        return Steps(start=_int(start.group("v")), operations=operations) if operations else None
    return None


def _operation(sentence: str, ordered: list[tuple[str, re.Pattern[str]]], hero: str) -> str:
    """The operation `sentence` describes; the hero (by given name) must be who the template says, since
    "Ana pays Bo $30" and "Bo pays Ana $30" differ only in who pays."""
    for kind, pattern in ordered:
        m = pattern.fullmatch(sentence)
        if m is None or m.groupdict().get("a", hero) != hero or m.groupdict().get("s", f"{hero}'s") != f"{hero}'s":
            continue
        numbers = m.groupdict()
        if kind in ("add_prod", "sub_prod"):
            return f"{'+' if kind == 'add_prod' else '-'} {_int(numbers['k'])} * {_int(numbers['m'])}"
        if kind == "mul":
            return f"* {_TIMES[numbers['x']]}"
        if kind == "div":
            return f"/ {_shares(numbers)}"
        return f"{'+' if kind == 'add' else '-'} {_int(numbers['k'])}"
    return ""  # an aside, or the question itself


def _shares(numbers: dict[str, str | None]) -> int:
    if numbers.get("k"):
        return _int(numbers["k"])
    if numbers.get("with"):
        return len(re.split(r", | and ", numbers["with"])) + 1
    return len(re.split(r", | and ", numbers["everyone"] or ""))


def _int(text: str) -> int:
    return int(text.replace("$", "").replace(",", ""))
