"""GSM8K-style: a running quantity changed by 2 (easy), 3 (medium) or 4–5 (hard) arithmetic operations."""

from __future__ import annotations

from rc1.data.generators.item import _Item
from rc1.data.generators.names import _COLORS, _GIVEN, _PACKS, _UNITS, MONTHS, _given
from rc1.data.generators.prompt import _pad, _words
from rc1.data.task import Difficulty

# kind -> (operations it costs, templates). Known fields: {h} hero, {a} hero's given name, {s} "{a}'s",
# {u} unit, {c} colour, {pk} container, {k}/{m} numbers, {x} "doubles"/"triples"/"quadruples",
# {with} the given names a share is split with, {everyone} the same with the hero first.
STOCK_STEPS = {
    "add": (
        1,
        (
            "{P1} gives {a} {k} more.",
            "{a} buys {k} more at {L1}.",
            "{L1} delivers {k} more to {a}.",
            "{P1} of {T1} sends {a} {k} {u}.",
            "{a} wins {k} {u} from {P1}.",
            "{P1} brings {a} {k} extra {u}.",
            "{a} gets {k} {u} from {P1} in {T1}.",
        ),
    ),
    "sub": (
        1,
        (
            "{a} gives {k} to {P1}.",
            "{a} sells {k} {u} to {P1} of {T1}.",
            "{a} loses {k} {u} near {L1}.",
            "{P1} borrows {k} {u} from {a}.",
            "{a} donates {k} {u} to {L1}.",
            "{P1} of {T1} buys {k} {u} from {a}.",
        ),
    ),
    "mul": (1, ("{P1} {x} {s} {u}.", "A deal with {P1} {x} {s} {u}.", "A trade at {L1} {x} {s} {u}.")),
    "div": (
        1,
        (
            "{a} shares the {u} equally with {with}, keeping one share.",
            "{a} splits the {u} evenly among {everyone}.",
            "{a} packs the {u} into {k} equal {pk}, keeps one, and gives {P1} the rest.",
        ),
    ),
    "add_prod": (
        2,
        (
            "{a} buys {k} {pk} of {m} {u} at {L1}.",
            "{P1} sends {a} {k} {pk} of {m} {u}.",
            "{a} picks up {k} {pk} holding {m} {u} each from {P1}.",
        ),
    ),
    "sub_prod": (
        2,
        (
            "{a} ships {k} {pk} of {m} {u} to {L1}.",
            "{P1} takes {k} {pk} of {m} {u} from {a}.",
            "{a} fills {k} {pk} with {m} {u} each for {P1}.",
        ),
    ),
}
STOCK_START = (
    "{h} of {T1} owns {v} {c} {u}.",
    "{h} keeps {v} {c} {u} at {L1}.",
    "At {L1}, {h} stores {v} {c} {u}.",
    "{h} collected {v} {c} {u} in {T1}.",
    "{h} has {v} {c} {u} from {T1}.",
)
_STOCK_QUESTIONS = (
    "How many {u} does {h} have now?",
    "How many {u} does {a} own at the end?",
    "How many {u} are left with {h}?",
    "What is {s} final count of {u}?",
)
MONEY_STEPS = {
    "add": (
        1,
        (
            "{a} earns {k} from {P1}.",
            "{P1} pays {a} {k}.",
            "{a} sells {P1} a bike for {k}.",
            "{P1} of {T1} gives {a} {k}.",
            "{a} wins {k} at {L1}.",
        ),
    ),
    "sub": (
        1,
        (
            "{a} spends {k} at {L1}.",
            "{a} pays {P1} {k}.",
            "{a} lends {P1} {k}.",
            "{a} donates {k} to {L1}.",
            "A coat from {L1} costs {a} {k}.",
        ),
    ),
    "mul": (1, ("A prize from {L1} {x} {s} money.", "{P1} {x} {s} savings.")),
    "div": (
        1,
        (
            "{a} splits the money equally with {with}, keeping one share.",
            "{a} divides the money into {k} equal envelopes, keeps one, and gives {P1} the rest.",
        ),
    ),
    "add_prod": (2, ("{a} works {k} hours at {L1} for {m} an hour.", "{a} sells {P1} {k} {u} at {m} each.")),
    "sub_prod": (2, ("{a} buys {k} {u} at {L1} for {m} each.", "{a} pays {P1} for {k} lessons at {m} each.")),
}
MONEY_START = ("{h} of {T1} has {v} saved.", "{h} keeps {v} at {L1}.", "{h} starts {mo} with {v}.")
_MONEY_QUESTIONS = (
    "How many dollars does {h} have now?",
    "How much money does {a} have left, in dollars?",
    "How many dollars remain with {h}?",
)
_GSM_ASIDES = (
    "{P1} and {P2} help {a} at {L1}.",
    "{a} rents from {P1} near {L1}.",
    "{P1} of {T1} advises {a} and {P2}.",
    "{s} cousin {P1} visits {T1} with {P2}.",
    "{a} and {P1} run {L1} for {P2}.",
    "{P1} of {T1} keeps {s} accounts.",
    "{s} sister {G1} teaches {P1} and {P2}.",
    "{a} trained {P1}, {P2} and {P3}.",
    "{P1} is {s} neighbor at {L1}.",
)
_TIMES = {2: "doubles", 3: "triples", 4: "quadruples"}


def _gsm8k(it: _Item, difficulty: Difficulty, _yes: bool) -> tuple[str, str, str]:
    hero = it.person()
    money = it.random() < 0.35
    steps, starts, questions = (
        (MONEY_STEPS, MONEY_START, _MONEY_QUESTIONS) if money else (STOCK_STEPS, STOCK_START, _STOCK_QUESTIONS)
    )
    a = _given(hero)
    known = {
        "h": hero,
        "a": a,
        "s": f"{a}'s",
        "u": it.pick(_UNITS),
        "c": it.pick(_COLORS),
        "pk": it.pick(_PACKS),
        "mo": it.pick(MONTHS),
    }
    value = it.randint(40, 900)
    body = [it.fill_one(starts, v=f"${value:,}" if money else f"{value:,}", **known)]
    budget = {"easy": 2, "medium": 3, "hard": it.pick((4, 5))}[difficulty]
    while budget:
        kind, value, numbers = it.pick(_gsm_options(it, value, budget))
        cost, templates = steps[kind]
        budget -= cost
        template = it.pick(templates)
        if ("{with}" in template or "{everyone}" in template) and numbers["k"] > 5:
            template = templates[-1]  # too many people to name: the "{k} equal parts" phrasing
        body.append(it.fill(template, **_gsm_words(it, kind, numbers, money, a), **known))
    question = it.fill_one(questions, **known)
    body = _pad(it, body, _words(question) - 1, lambda: (it.deal(_GSM_ASIDES, **known), hero))
    return " ".join(body + [question]), "", str(value)


def _gsm_options(it: _Item, v: int, budget: int) -> list[tuple[str, int, dict[str, int]]]:
    """Every step that keeps the running value a positive integer below 20,000, with its numbers."""
    k = it.randint(3, 300)
    options = [("add", v + k, {"k": k})]
    if v > 4:
        k = it.randint(1, v - 1) if v < 12 else it.randint(2, v * 3 // 4)
        options.append(("sub", v - k, {"k": k}))
    factor = it.pick((2, 3, 4))
    if v * factor <= 20000:
        options.append(("mul", v * factor, {"x": factor}))
    divisors = [d for d in range(2, 10) if v % d == 0 and v // d >= 2]
    if divisors:
        d = it.pick(divisors)
        options.append(("div", v // d, {"k": d}))
    if budget >= 2:
        k, m = it.randint(2, 12), it.randint(3, 48)
        options.append(("add_prod", v + k * m, {"k": k, "m": m}))
        m = it.randint(2, 12)
        if (v - 1) // m >= 2:
            k = it.randint(2, min((v - 1) // m, 30))
            options.append(("sub_prod", v - k * m, {"k": k, "m": m}))
    return options


def _gsm_words(it: _Item, kind: str, numbers: dict[str, int], money: bool, hero: str) -> dict[str, str]:
    """Numbers as the sentence shows them: sums of money carry `$`; counts of boxes, hours or people do not."""
    out = {}
    for key, v in numbers.items():
        if key == "x":
            out["x"] = _TIMES[v]
        elif money and (key == "m" or (key == "k" and kind in ("add", "sub"))):
            out[key] = f"${v:,}"
        else:
            out[key] = f"{v:,}"
    if kind == "div":  # k shares: the hero and k - 1 others, named
        others = [it.fresh(_GIVEN) for _ in range(numbers["k"] - 1)]
        out["with"], out["everyone"] = _and(others), _and([hero, *others])
    return out


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
