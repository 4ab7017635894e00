"""The `calc` tool: exact arithmetic on a small, safe grammar, as a pure function of the expression.

Grammar: numbers (integers, decimals such as `2.5` or `.5`, `1e3`; a thousands separator `1,234` and a leading `$`
are read as the number they write, since the tasks print money and counts that way), the binary operators
`+ - * / // % **`, unary `-` and `+`, and parentheses. Nothing else parses: no names, calls, attributes, subscripts,
comparisons, strings. Evaluation is exact (`fractions.Fraction`): a decimal literal is read from its text, never
through a float. Bounds: at most `MAX_LENGTH` characters; an exponent a whole number of at most `MAX_EXPONENT` in size;
no value past `MAX_BITS` bits in its numerator or denominator.

Output: an integer when the value is whole (`42`, `-7`); else the exact decimal when it has at most `MAX_DECIMALS`
places (`2.5`, `0.125`); else the exact fraction in lowest terms (`1/3`, `-22/7`). Never rounded, so the same
expression gives the same text on every machine. A refusal is a result the model reads, starting `error: `
(`Calculated.error` names its kind); nothing raises to the caller.
"""

from __future__ import annotations

import ast
import operator
import re
from fractions import Fraction
from typing import Literal

import msgspec

MAX_LENGTH = 200
MAX_EXPONENT = 64
MAX_BITS = 512
MAX_DECIMALS = 12
CalcError = Literal["", "bad_expression", "too_large", "division_by_zero"]
_THOUSANDS = re.compile(r"(?<![\d.])\d{1,3}(?:,\d{3})+(?!\d)")
_OPERATORS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}
_HINTS = {ast.BitXor: " (write powers as **)", ast.BitAnd: "", ast.BitOr: "", ast.LShift: "", ast.RShift: ""}


class Calculated(msgspec.Struct, frozen=True, kw_only=True):
    """What `calc` answers: the text the model reads, and the refusal's kind ("" when it computed)."""

    text: str
    error: CalcError = ""


class _Refused(Exception):
    def __init__(self, kind: CalcError, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def calculate(expression: str) -> Calculated:
    """The value of `expression` as text, or the reason it was refused."""
    if not isinstance(expression, str):
        kind = type(expression).__name__
        return Calculated(text=f"error: expected the expression as text, got {kind}", error="bad_expression")
    if len(expression.strip()) > MAX_LENGTH:  # before any pattern runs over it
        return Calculated(text=f"error: expression longer than {MAX_LENGTH} characters", error="bad_expression")
    source = _THOUSANDS.sub(lambda m: m.group(0).replace(",", ""), expression.strip().replace("$", ""))
    if not source:
        return Calculated(text="error: empty expression; write one such as 12 * (3 + 4)", error="bad_expression")
    try:
        tree = ast.parse(source, mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return Calculated(text=f"error: not an arithmetic expression: {source[:80]!r}", error="bad_expression")
    try:
        return Calculated(text=show(_value(tree.body, source)))
    except _Refused as e:
        return Calculated(text=f"error: {e}", error=e.kind)
    except RecursionError:
        return Calculated(text="error: expression nested too deeply", error="bad_expression")


def calc(expression: str) -> str:
    """The text `calculate` answers: the value, or `error: …`."""
    return calculate(expression).text


def show(value: Fraction) -> str:
    """An integer when whole, an exact short decimal when there is one, else the fraction in lowest terms."""
    if value.denominator == 1:
        return str(value.numerator)
    places = _decimal_places(value.denominator)
    if places is None or places > MAX_DECIMALS:
        return f"{value.numerator}/{value.denominator}"
    sign, scaled = ("-" if value < 0 else ""), abs(value.numerator) * 10**places // value.denominator
    whole, frac = divmod(scaled, 10**places)
    return f"{sign}{whole}.{frac:0{places}d}".rstrip("0")


def _decimal_places(denominator: int) -> int | None:
    """The places of a terminating decimal with this (reduced) denominator; None when it never terminates."""
    twos = fives = 0
    while denominator % 2 == 0:
        denominator, twos = denominator // 2, twos + 1
    while denominator % 5 == 0:
        denominator, fives = denominator // 5, fives + 1
    return max(twos, fives) if denominator == 1 else None


def _value(node: ast.expr, source: str) -> Fraction:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return _bounded(Fraction(node.value) if type(node.value) is int else _decimal(source, node))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _value(node.operand, source)
        return -inner if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        return _power(_value(node.left, source), _value(node.right, source))
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        left, right = _value(node.left, source), _value(node.right, source)
        if right == 0 and not isinstance(node.op, (ast.Add, ast.Sub, ast.Mult)):
            raise _Refused("division_by_zero", "division by zero")
        return _bounded(Fraction(_OPERATORS[type(node.op)](left, right)))  # a // of Fractions is an int
    if isinstance(node, ast.BinOp) and type(node.op) in _HINTS:
        raise _Refused("bad_expression", f"operator not allowed{_HINTS[type(node.op)]}; use + - * / // % **")
    shown = ast.get_source_segment(source, node) or type(node).__name__
    raise _Refused("bad_expression", f"only numbers and + - * / // % ** ( ) are allowed, not {shown!r}")


def _decimal(source: str, node: ast.Constant) -> Fraction:
    """A decimal literal read exactly from its text; a power of ten past the bounds is refused before it is built."""
    text = ast.get_source_segment(source, node).replace("_", "")
    mantissa, _, exponent = text.lower().partition("e")
    if exponent and abs(int(exponent)) > MAX_BITS:
        raise _Refused("too_large", f"{text} is too large a number")
    return Fraction(mantissa) * Fraction(10) ** int(exponent or 0)


def _power(base: Fraction, exponent: Fraction) -> Fraction:
    if exponent.denominator != 1:
        raise _Refused(
            "bad_expression", f"exponent {show(exponent)} is not a whole number; the result would not be exact"
        )
    if abs(exponent) > MAX_EXPONENT:
        raise _Refused("too_large", f"exponent {exponent} is larger than {MAX_EXPONENT}")
    if base == 0 and exponent < 0:
        raise _Refused("division_by_zero", "division by zero (0 to a negative power)")
    if max(base.numerator.bit_length(), base.denominator.bit_length()) * abs(int(exponent)) > MAX_BITS:
        raise _Refused("too_large", f"the result has more than {MAX_BITS} bits")
    return _bounded(Fraction(base) ** int(exponent))


def _bounded(value: Fraction) -> Fraction:
    if max(value.numerator.bit_length(), value.denominator.bit_length()) > MAX_BITS:
        raise _Refused("too_large", f"a value along the way has more than {MAX_BITS} bits")
    return value
