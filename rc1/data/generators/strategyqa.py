"""StrategyQA-style: a yes/no question whose answer needs an unstated step (lifetimes overlap, a
weight limit, speed × time, water freezes below zero) over facts given in the context. Easy: the
needed facts; medium: plus one distractor fact; hard: a variant needing one more fact or
arithmetic step, plus two distractors. Each kind builds its numbers to fit the drawn label.
"""

from __future__ import annotations

from rc1.data.generators.item import _Item
from rc1.data.generators.names import (
    _BUILDINGS,
    _CATEGORIES,
    _FESTIVALS,
    _HEAVY,
    _LANDS,
    _RIVERS,
    _TOWERS,
    _TOWNS,
    _UNITS,
    MONTHS,
    _given,
)
from rc1.data.generators.prompt import _PERSON_ASIDES, _WORLD_ASIDES, _pad, _words
from rc1.data.task import Difficulty

_LIFESPAN = ("{p} lived {b}–{d}.", "{p} lived from {b} to {d} in {T1}.", "{p} ({b}–{d}) was {a_occ} from {T1}.")


def _sq_met(it: _Item, yes: bool, hard: bool):
    r = it
    a, b = it.person(), it.person()
    born_a = r.randint(1500, 1900)
    died_a = born_a + r.randint(40, 90)
    life_b = r.randint(40, 90)
    if yes:  # lifetimes overlap by at least five years
        born_b = r.randint(born_a - life_b + 5, died_a - 5)
    else:  # at least three years apart
        born_b = r.pick((r.randint(died_a + 3, died_a + 80), r.randint(born_a - life_b - 80, born_a - life_b - 3)))
    facts = [
        it.fill_one(_LIFESPAN, p=a, b=born_a, d=died_a),
        f"{b} was born {born_b} and died aged {life_b}."
        if hard
        else it.fill_one(_LIFESPAN, p=b, b=born_b, d=born_b + life_b),
    ]
    q = it.pick(
        (f"Could {a} have met {b}?", f"Were {a} and {b} ever alive at once?", f"Could {a} have written to {b}?")
    )
    return q, facts, [a, b]


def _sq_opening(it: _Item, yes: bool, hard: bool):
    r = it
    person, building = it.person(), f"{it.fresh(_TOWNS)} {it.pick(_BUILDINGS)}"
    born = r.randint(1600, 1930)
    died = born + r.randint(45, 90)
    opened = (
        r.randint(born + 8, died - 2)
        if yes
        else r.pick((r.randint(died + 2, died + 90), r.randint(born - 90, born - 2)))
    )
    facts = [it.fill_one(_LIFESPAN, p=person, b=born, d=died)]
    if hard:
        older, gap = f"{it.fresh(_TOWNS)} {it.pick(_BUILDINGS)}", r.randint(3, 60)
        facts += [f"The {building} opened {gap} years after the {older}.", f"The {older} opened {opened - gap}."]
    else:
        facts.append(it.fill_one(("The {bl} opened {y}.", "{P1} opened the {bl} in {y}."), bl=building, y=opened))
    q = it.pick(
        (
            f"Could {person} have attended the opening of the {building}?",
            f"Was {person} alive when the {building} opened?",
        )
    )
    return q, facts, [person]


def _sq_vote(it: _Item, yes: bool, hard: bool):
    r = it
    person, land = it.person(), it.fresh(_LANDS)
    limit, year = r.randint(16, 25), r.randint(1900, 2024)
    born = year - (r.randint(limit + 1, limit + 50) if yes else r.randint(2, limit - 1))
    facts = [it.pick((f"In {land}, voting starts at age {limit}.", f"{land} sets its voting age at {limit}."))]
    if hard:
        other, gap = it.person(), r.randint(2, 30)
        facts += [f"{person} of {land} was born {gap} years after {other}.", f"{other} was born {born - gap}."]
    else:
        facts.append(
            it.pick((f"{person} of {land} was born {born}.", f"{person}, citizen of {land}, was born {born}."))
        )
    q = it.pick(
        (
            f"Could {person} vote in the {land} election of {year}?",
            f"Was {person} old enough to vote in {land} in {year}?",
        )
    )
    return q, facts, [person]


def _sq_lift(it: _Item, yes: bool, hard: bool):
    r = it
    person, thing, town = it.person(), it.pick(_HEAVY), it.fresh(_TOWNS)
    each, count = r.randint(2, 9), r.randint(4, 30)
    crate = r.randint(3, 12) if hard else 0
    total = each * count + crate
    limit = total + r.randint(2, 25) if yes else total - r.randint(2, min(25, total - 1))
    facts = [
        f"Each {town} {thing} weighs {each} kg.",
        it.pick((f"{person} can lift {limit} kg.", f"{person} lifts {limit} kg at most.")),
    ]
    if hard:
        facts.append(f"The empty crate itself weighs {crate} kg.")
    q = it.pick(
        (
            f"Could {person} lift a crate of {count} {town} {thing}s?",
            f"Can {person} carry {count} {town} {thing}s in a crate alone?",
        )
    )
    return q, facts, [person]


def _sq_walk(it: _Item, yes: bool, hard: bool):
    r = it
    person, a, b = it.person(), it.fresh(_TOWNS), it.fresh(_TOWNS)
    speed, hours = r.randint(3, 6), r.randint(3, 11)
    rest = r.randint(1, 2) if hard else 0
    reach = speed * (hours - rest)
    dist = r.randint(max(2, reach - 12), reach - 1) if yes else r.randint(reach + 1, reach + 12)
    facts = [
        f"{a} lies {dist} km from {b}.",
        f"{person} walks {speed} km an hour.",
        f"{person} leaves {a} {hours} hours before nightfall.",
    ]
    if hard:
        facts.append(f"{person} rests {rest} hours at {it.place()} on the way.")
    q = it.pick(
        (f"Could {person} walk from {a} to {b} before nightfall?", f"Will {person} reach {b} on foot before dark?")
    )
    return q, facts, [person]


def _sq_submerge(it: _Item, yes: bool, hard: bool):
    r = it
    town, lake, tower = it.fresh(_TOWNS), it.fresh(_RIVERS), it.pick(_TOWERS)
    depth = r.randint(30, 300)
    height = depth - r.randint(2, 15) if yes else depth + r.randint(2, 40)
    spire = r.randint(3, 12) if hard else 0
    facts = [f"Lake {lake} is {depth} m deep."]
    if hard:
        facts += [
            f"The {town} {tower} stands {height - spire} m without its spire.",
            f"The {town} spire adds {spire} m.",
        ]
    else:
        facts.append(f"The {town} {tower} is {height} m tall.")
    q = it.pick(
        (
            f"Could the {town} {tower} be hidden completely under Lake {lake}?",
            f"Would the {town} {tower} vanish entirely if sunk in Lake {lake}?",
        )
    )
    return q, facts, []


def _sq_market(it: _Item, yes: bool, hard: bool):
    person, town, species = it.person(), it.fresh(_TOWNS), it.fresh(_RIVERS).lower()
    kind, banned = it.rng.sample(_CATEGORIES, 2)
    banned = banned if yes else kind
    if hard:
        family = f"{it.fresh(_RIVERS)}id"
        facts = [f"The {species} belongs to the {family} family.", f"Every {family} is one of the {kind}."]
    else:
        facts = [it.pick((f"The {species} is one of the {kind}.", f"Zoologists class the {species} among {kind}."))]
    facts.append(it.pick((f"{town} Market turns away all {banned}.", f"No {banned} may enter {town} Market.")))
    q = it.pick(
        (
            f"Would {person}'s pet {species} be let into {town} Market?",
            f"Can {person} take a pet {species} into {town} Market?",
        )
    )
    return q, facts, [person]


def _sq_afford(it: _Item, yes: bool, hard: bool):
    r = it
    person, town, unit = it.person(), it.fresh(_TOWNS), it.pick(_UNITS)
    price, count = r.randint(2, 40), r.randint(2, 15)
    fee = r.randint(2, 20) if hard else 0
    cost = price * count + fee
    purse = cost + r.randint(0, 30) if yes else cost - r.randint(1, min(30, cost - 1))
    facts = [f"At {town} Fair, {unit} cost {price} coins apiece.", f"{person} brings {purse} coins to {town}."]
    if hard:
        facts.append(f"Entry to {town} Fair costs {fee} coins.")
    q = it.pick(
        (
            f"Can {person} afford {count} {unit} at {town} Fair?",
            f"Does {person} have coins enough for {count} {unit} in {town}?",
        )
    )
    return q, facts, [person]


def _sq_frozen(it: _Item, yes: bool, hard: bool):
    r = it
    town, lake, festival = it.fresh(_TOWNS), it.fresh(_RIVERS), it.pick(_FESTIVALS)
    month = r.randint(0, 12 - 1)
    temp = -r.randint(3, 25) if yes else r.randint(3, 25)
    facts = [f"In {MONTHS[month]}, Lake {lake} averages {temp} degrees Celsius."]
    if hard:
        facts.append(f"{town} holds its {festival} the month after {MONTHS[month - 1]}.")
    else:
        facts.append(f"The {town} {festival} takes place every {MONTHS[month]}.")
    q = it.pick(
        (
            f"Would Lake {lake} be frozen during the {town} {festival}?",
            f"Could skaters cross Lake {lake} during the {town} {festival}?",
        )
    )
    return q, facts, []


def _sq_before_birth(it: _Item, yes: bool, hard: bool):
    r = it
    company, person = it.company(), it.person()
    born = r.randint(1750, 1990)
    founded = born - r.randint(2, 120) if yes else born + r.randint(2, min(120, 2022 - born))
    facts = [it.fill("{T1} native {p} was born {b}.", p=person, b=born)]
    if hard:
        gap, town = r.randint(3, 40), it.fresh(_TOWNS)
        facts += [
            f"{company} was founded {gap} years after the {town} fire.",
            f"The {town} fire broke out in {founded - gap}.",
        ]
    else:
        facts.append(it.fill_one(("{c} was founded {y}.", "{P1} founded {c} in {y}."), c=company, y=founded))
    q = it.pick((f"Was {company} already in business when {person} was born?", f"Is {company} older than {person}?"))
    return q, facts, [person]


def _sq_read(it: _Item, yes: bool, hard: bool):
    r = it
    person, book = it.person(), f"The {it.pick(_UNITS).capitalize()} of {it.fresh(_TOWNS)}"
    per_day = r.randint(10, 90)
    days = 5 if hard else 7
    pages = per_day * days - r.randint(1, 40) if yes else per_day * days + r.randint(1, 40)
    facts = [f"{book} runs {pages} pages.", f"{person} reads {per_day} pages a day."]
    if hard:
        facts.append(f"{person} reads only on weekdays, never at weekends.")
    q = it.pick((f"Could {person} finish {book} within one week?", f"Can {person} read all of {book} in a week?"))
    return q, facts, [person]


_SQ_KINDS = (
    _sq_met,
    _sq_opening,
    _sq_vote,
    _sq_lift,
    _sq_walk,
    _sq_submerge,
    _sq_market,
    _sq_afford,
    _sq_frozen,
    _sq_before_birth,
    _sq_read,
)


def _strategyqa(it: _Item, difficulty: Difficulty, yes: bool) -> tuple[str, str, str]:
    question, facts, people = it.pick(_SQ_KINDS)(it, yes, difficulty == "hard")
    for _ in range({"easy": 0, "medium": 1, "hard": 2}[difficulty]):
        # A fact from another instance about entities of its own: it reads like the needed facts but
        # shares no entity with them, so it cannot change the answer.
        _, other, _ = it.pick(_SQ_KINDS)(it, it.random() < 0.5, False)
        facts.append(it.pick(other))
    it.rng.shuffle(facts)

    def aside() -> tuple[str, str]:
        if people and it.random() < 0.6:
            person = it.pick(people)
            return it.deal(_PERSON_ASIDES, g=_given(person)), person
        return it.deal(_WORLD_ASIDES), ""

    facts = _pad(it, facts, _words(question), aside)
    return question, " ".join(facts), "yes" if yes else "no"
