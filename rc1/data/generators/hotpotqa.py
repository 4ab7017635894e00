"""HotpotQA-style: two paragraphs joined by a bridge entity, or two entities compared. Distractors
are paragraphs of the same shape about other entities: easy 0, medium 1, hard 3.
"""

from __future__ import annotations

from rc1.data.generators.item import _Item
from rc1.data.generators.names import _GENRES, _GIVEN, _RIVERS, _TOWNS, TITLE_NOUNS, _given
from rc1.data.generators.prompt import _FRAME_WORDS, _PERSON_ASIDES, _WORLD_ASIDES, MIN_PROMPT_WORDS, _words
from rc1.data.task import Difficulty

_BIRTH = (  # p born in t in y
    "{p} ({y}) was born in {t}.",
    "{Occ} {p} was born {y} in {t}.",
    "{p} (born {t}, {y}) is {a_occ}.",
    "{t}-born {p} ({y}) became {a_occ}.",
    "{Occ} {p} is a native of {t}, born {y}.",
)
_ON_RIVER = (  # town t lies on river r
    "{t} lies on the {r} near {T1}.",
    "The {r} flows through {t} and {T1}.",
    "{t}, a town of {pop} on the {r}, borders {T1}.",
    "{t} stands on the {r}, upstream of {T1}.",
)
_EMPLOYED = (  # p works for company c
    "{p} works for {c} as {a_occ}.",
    "{c} hired {p} in {yr}.",
    "{p} joined {c} in {yr}.",
    "Since {yr}, {c} has employed {p}.",
)
_BASED = (  # company c, founded y, is based in t
    "{c} ({y}) is based in {t}.",
    "{c}, founded {y}, is headquartered in {t}.",
    "{t} is home to {c}, founded {y}.",
    "{c} has made {prod} in {t} since its founding in {y}.",
)
_FOUNDED_BY = (  # person p founded company c in y
    "{p} founded {c} in {y}.",
    "{c} was founded by {p} in {y}.",
    "In {y}, {p} set up {c} to make {prod}.",
)
_WROTE = (  # person p wrote work w
    "{w} ({yr}) is a {genre} by {p}.",
    "{p} wrote {w}, a {genre}, in {yr}.",
    "{w} ({yr}) is the best-known {genre} of {p}.",
)
_RIVER_LENGTH = (  # river r is km long
    "The {r} runs {km} km from {T1} to {T2}.",
    "Rising near {T1}, the {r} flows {km} km to {T2}.",
    "The {r} ({km} km) reaches the sea at {T1}.",
)
_POPULATION = (  # town t has pop inhabitants
    "{t}, on the {R1}, has {pop} inhabitants.",
    "{pop} people live in {t}, near {T1}.",
    "{t} counted {pop} residents in {yr}.",
)


def _hotpotqa(it: _Item, difficulty: Difficulty, yes: bool) -> tuple[str, str, str]:
    paragraphs, distractor, question, answer, people = it.pick(_HOTPOT_KINDS)(it, yes)
    for _ in range({"easy": 0, "medium": 1, "hard": 3}[difficulty]):
        paragraphs.append(distractor())
    it.rng.shuffle(paragraphs)
    count = _FRAME_WORDS + _words(question) + sum(_words(p) for p in paragraphs)
    while count < MIN_PROMPT_WORDS:
        # An aside about a question's person goes into that person's paragraph; others anywhere.
        person = it.pick(people) if people and it.random() < 0.6 else None
        if person:
            aside = it.deal(_PERSON_ASIDES, g=_given(person))
            i = next(i for i, p in enumerate(paragraphs) if person in p)
        else:
            aside, i = it.deal(_WORLD_ASIDES), it.randint(0, len(paragraphs) - 1)
        paragraphs[i] += " " + aside
        count += _words(aside)
    return question, "\n".join(paragraphs), answer


def _year(it: _Item, low: int = 1780, high: int = 1995) -> int:
    return it.randint(low, high)


def _pop(it: _Item) -> str:
    return f"{it.randint(900, 98000):,}"


def _bridge_river(it: _Item, yes: bool):
    person, town, river = it.person(), it.fresh(_TOWNS), it.fresh(_RIVERS)
    paras = [it.fill_one(_BIRTH, p=person, t=town, y=_year(it)), it.fill_one(_ON_RIVER, t=town, r=river, pop=_pop(it))]

    def distract() -> str:  # a same-shaped paragraph about other entities
        if it.random() < 0.5:
            return it.fill_one(_BIRTH, p=it.person(), t=it.fresh(_TOWNS), y=_year(it))
        return it.fill_one(_ON_RIVER, t=it.fresh(_TOWNS), r=it.fresh(_RIVERS), pop=_pop(it))

    q = it.pick(
        (
            f"On which river lies the birthplace of {person}?",
            f"{person} was born beside which river?",
            f"Which river flows past the birthplace of {person}?",
            f"The town where {person} was born lies on which river?",
        )
    )
    return paras, distract, q, river, [person]


def _bridge_employer(it: _Item, yes: bool):
    person, company, town = it.person(), it.company(), it.fresh(_TOWNS)
    paras = [
        it.fill_one(_EMPLOYED, p=person, c=company),
        it.fill_one(_BASED, c=company, t=town, y=_year(it, 1750, 2005)),
    ]

    def distract() -> str:
        if it.random() < 0.5:
            return it.fill_one(_EMPLOYED, p=it.person(), c=it.company())
        return it.fill_one(_BASED, c=it.company(), t=it.fresh(_TOWNS), y=_year(it, 1750, 2005))

    q = it.pick(
        (
            f"In which town is the employer of {person} based?",
            f"Where is the company employing {person} headquartered?",
            f"{person} works for a company based in which town?",
        )
    )
    return paras, distract, q, town, [person]


def _bridge_founder(it: _Item, yes: bool):
    company, person, town = it.company(), it.person(), it.fresh(_TOWNS)
    born = _year(it, 1760, 1960)
    paras = [
        it.fill_one(_FOUNDED_BY, c=company, p=person, y=born + it.randint(22, 60)),
        it.fill_one(_BIRTH, p=person, t=town, y=born),
    ]

    def distract() -> str:
        if it.random() < 0.5:
            return it.fill_one(_FOUNDED_BY, c=it.company(), p=it.person(), y=_year(it, 1790, 2010))
        return it.fill_one(_BIRTH, p=it.person(), t=it.fresh(_TOWNS), y=_year(it, 1760, 1960))

    q = it.pick(
        (
            f"Where was the founder of {company} born?",
            f"{company} was founded by someone born in which town?",
            f"In which town was the founder of {company} born?",
        )
    )
    return paras, distract, q, town, [person]


def _title(it: _Item) -> str:
    noun = it.pick(TITLE_NOUNS)
    return it.pick(
        (f"The {noun} of {it.fresh(_TOWNS)}", f"{it.fresh(_GIVEN)}'s {noun}", f"{noun} over {it.fresh(_TOWNS)}")
    )


def _bridge_author(it: _Item, yes: bool):
    work, person, born = _title(it), it.person(), _year(it)
    genre = it.pick(_GENRES)
    paras = [
        it.fill_one(_WROTE, w=work, p=person, genre=genre),
        it.fill_one(_BIRTH, p=person, t=it.fresh(_TOWNS), y=born),
    ]

    def distract() -> str:
        if it.random() < 0.5:
            return it.fill_one(_WROTE, w=_title(it), p=it.person(), genre=it.pick(_GENRES))
        return it.fill_one(_BIRTH, p=it.person(), t=it.fresh(_TOWNS), y=_year(it))

    q = it.pick(
        (
            f"In what year was the author of {work} born?",
            f"The writer of {work} was born in which year?",
            f"{work} was written by someone born in which year?",
        )
    )
    return paras, distract, q, str(born), [person]


def _compare_founded(it: _Item, yes: bool):
    a, b = it.company(), it.company()
    va, vb = it.rng.sample(range(1750, 2010), 2)
    paras = [it.fill_one(_BASED, c=a, t=it.fresh(_TOWNS), y=va), it.fill_one(_BASED, c=b, t=it.fresh(_TOWNS), y=vb)]
    distract = lambda: it.fill_one(_BASED, c=it.company(), t=it.fresh(_TOWNS), y=_year(it, 1750, 2010))  # noqa: E731
    q = it.pick(
        (
            f"Which was founded earlier, {a} or {b}?",
            f"Which is older, {a} or {b}?",
            f"{a} or {b}: which was established first?",
        )
    )
    return paras, distract, q, a if va < vb else b, []


def _compare_born(it: _Item, yes: bool):
    a, b = it.person(), it.person()
    ya, yb = it.rng.sample(range(1780, 1995), 2)
    paras = [it.fill_one(_BIRTH, p=a, t=it.fresh(_TOWNS), y=ya), it.fill_one(_BIRTH, p=b, t=it.fresh(_TOWNS), y=yb)]
    distract = lambda: it.fill_one(_BIRTH, p=it.person(), t=it.fresh(_TOWNS), y=_year(it))  # noqa: E731
    q = it.pick(
        (f"Who was born first, {a} or {b}?", f"Who is older, {a} or {b}?", f"{a} or {b}: who was born earlier?")
    )
    return paras, distract, q, a if ya < yb else b, [a, b]


def _compare_river(it: _Item, yes: bool):
    a, b = it.fresh(_RIVERS), it.fresh(_RIVERS)
    ka, kb = it.rng.sample(range(40, 1400), 2)
    paras = [it.fill_one(_RIVER_LENGTH, r=a, km=ka), it.fill_one(_RIVER_LENGTH, r=b, km=kb)]
    distract = lambda: it.fill_one(_RIVER_LENGTH, r=it.fresh(_RIVERS), km=it.randint(40, 1400))  # noqa: E731
    q = it.pick((f"Which river is longer, the {a} or the {b}?", f"The {a} or the {b}: which runs longer?"))
    return paras, distract, q, a if ka > kb else b, []


def _compare_population(it: _Item, yes: bool):
    a, b = it.fresh(_TOWNS), it.fresh(_TOWNS)
    pa, pb = it.rng.sample(range(900, 98000), 2)
    paras = [it.fill_one(_POPULATION, t=a, pop=f"{pa:,}"), it.fill_one(_POPULATION, t=b, pop=f"{pb:,}")]
    distract = lambda: it.fill_one(_POPULATION, t=it.fresh(_TOWNS), pop=_pop(it))  # noqa: E731
    q = it.pick((f"Which town has more inhabitants, {a} or {b}?", f"{a} or {b}: which town is more populous?"))
    return paras, distract, q, a if pa > pb else b, []


def _compare_same_town(it: _Item, yes: bool):
    a, b, town = it.person(), it.person(), it.fresh(_TOWNS)
    paras = [
        it.fill_one(_BIRTH, p=a, t=town, y=_year(it)),
        it.fill_one(_BIRTH, p=b, t=town if yes else it.fresh(_TOWNS), y=_year(it)),
    ]
    distract = lambda: it.fill_one(_BIRTH, p=it.person(), t=it.fresh(_TOWNS), y=_year(it))  # noqa: E731
    q = it.pick((f"Were {a} and {b} born in the same town?", f"Do {a} and {b} share a birthplace?"))
    return paras, distract, q, "yes" if yes else "no", [a, b]


_HOTPOT_KINDS = (
    _bridge_river,
    _bridge_employer,
    _bridge_founder,
    _bridge_author,
    _compare_founded,
    _compare_born,
    _compare_river,
    _compare_population,
    _compare_same_town,
)
