"""The random source of one item, and template filling.

Templates are format strings. Fields the caller knows are passed in; the others are made on first
use by `_Item.fill`: {P1} a new person, {G1} a given name, {T1} a town, {R1} a river, {C1} a company,
{L1} a named place ("Korvenford Market"), {occ}/{Occ}/{a_occ} an occupation (bare, capitalized, with
"a"/"an"), {prod} a product, {yr} a year.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable, Sequence

from rc1.data.generators.names import (
    _COMPANY_KINDS,
    _GIVEN,
    _PRODUCTS,
    _RIVERS,
    _SURNAMES,
    _TOWNS,
    _VENUES,
    OCCUPATIONS,
)


class _Item:
    """The random source of one item and the names already used in it (never the same name twice)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.random = rng.random
        self.used: set[str] = set()
        self.dealt: dict[int, set[int]] = {}

    def pick(self, options: Sequence):
        return options[int(self.random() * len(options))]

    def randint(self, low: int, high: int) -> int:
        """Uniform on [low, high]; `random.randint` is four times slower and this runs ~30 times an item."""
        return low + int(self.random() * (high - low + 1))

    def fresh(self, table: tuple[tuple[str, ...], tuple[str, ...]]) -> str:
        random, used = self.random, self.used
        stems, tails = table
        while (name := stems[int(random() * len(stems))] + tails[int(random() * len(tails))]) in used:
            pass
        used.add(name)
        return name

    def person(self) -> str:
        return f"{self.fresh(_GIVEN)} {self.fresh(_SURNAMES)}"

    def company(self) -> str:
        return f"{self.fresh(_SURNAMES)} {self.pick(_COMPANY_KINDS)}"

    def place(self) -> str:
        return f"{self.fresh(_TOWNS)} {self.pick(_VENUES)}"

    def fill(self, template: str, **known) -> str:
        """`template` with its fields: the known ones, and new entities made on first use ({P1}, {T2}, ...)."""
        out = []
        for literal, field, kind in _parts(template):
            out.append(literal)
            if field is not None:
                value = known.get(field)
                if value is None:
                    value = known[field] = _NEW[kind](self)
                out.append(value if isinstance(value, str) else str(value))
        return "".join(out)

    def fill_one(self, templates: Sequence[str], **known) -> str:
        return self.fill(self.pick(templates), **known)

    def deal(self, templates: Sequence[str], **known) -> str:
        """Like `fill_one`, but no template comes twice until all have come (asides stay varied)."""
        dealt = self.dealt.setdefault(id(templates), set())
        if len(dealt) == len(templates):
            dealt.clear()
        while (i := int(self.random() * len(templates))) in dealt:
            pass
        dealt.add(i)
        return self.fill(templates[i], **known)


_NEW: dict[str, Callable[[_Item], str]] = {
    "P": _Item.person,
    "C": _Item.company,
    "L": _Item.place,
    "G": lambda it: it.fresh(_GIVEN),
    "T": lambda it: it.fresh(_TOWNS),
    "R": lambda it: it.fresh(_RIVERS),
    "occ": lambda it: it.pick(OCCUPATIONS),
    "Occ": lambda it: it.pick(OCCUPATIONS).capitalize(),
    "a_occ": lambda it: _article(it.pick(OCCUPATIONS)),
    "prod": lambda it: it.pick(_PRODUCTS),
    "yr": lambda it: str(it.randint(1800, 2015)),
}


_PARTS: dict[str, tuple[tuple[str, str | None, str | None], ...]] = {}


def _parts(template: str) -> tuple[tuple[str, str | None, str | None], ...]:
    """(literal, field, field kind) triples, parsed once per template: `str.format` re-parses on every call."""
    parts = _PARTS.get(template)
    if parts is None:
        parts = _PARTS[template] = tuple(
            (literal, field, field.rstrip("0123456789") if field is not None else None)
            for literal, field, _, _ in string.Formatter().parse(template)
        )
    return parts


def _article(noun: str) -> str:
    return f"an {noun}" if noun[0] in "aeiou" else f"a {noun}"
