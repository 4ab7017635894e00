"""Built-in task generators: GSM8K-, HotpotQA- and StrategyQA-style items whose answers are known by construction.

Determinism: item i is drawn from its own `random.Random` keyed by (id_prefix, task, seed, i) — a str
seed, which `random` hashes with SHA-512, so the same on every machine and in every process. An item
depends on nothing but its key: the first k items of a 600-item pool are those of a 30,000-item
pool, and two prefixes ("gsm8k", "shadow-gsm8k") are disjoint streams even under the same seed.

Diversity is designed in. Corpus-level distinct-2 counts a bigram once however many items use it, so
a template's fixed words are worth nothing after the first item; what counts is how many bigrams
touch a high-entropy slot. Templates therefore keep runs of fixed words short, put a made-up name
(syllable-built: ~30,000 given names, surnames and towns each) beside almost every fixed word, and
use names where English would use a pronoun.

Templates are format strings. Fields the caller knows are passed in; the others are made on first
use by `_Item.fill`: {P1} a new person, {G1} a given name, {T1} a town, {R1} a river, {C1} a company,
{L1} a named place ("Korvenford Market"), {occ}/{Occ}/{a_occ} an occupation (bare, capitalized, with
"a"/"an"), {prod} a product, {yr} a year.

Length: every prompt has at least `MIN_PROMPT_TOKENS` tokens (the production floor is 64). Short
items get asides about their own or new entities — never a fact that bears on the answer.
"""

from __future__ import annotations

import random
import string
import zlib
from collections.abc import Callable, Sequence

from rc1.checks.text import tokens
from rc1.data.task import Difficulty, TaskItem

TASKS: tuple[str, ...] = ("gsm8k", "hotpotqa", "strategyqa")
DIFFICULTIES: tuple[Difficulty, ...] = ("easy", "medium", "hard")
INSTRUCTION = "End with `Answer: <answer>`."
MIN_PROMPT_TOKENS = 70


def render_prompt(question: str, context: str = "") -> str:
    """Exactly what the policy is shown; the same framing for built-in and loaded items."""
    head = f"Context:\n{context}\n\n" if context else ""
    return f"{head}Question: {question}\n{INSTRUCTION}"


def generate(
    task: str, n: int, seed: int, id_prefix: str, *, difficulties: Sequence[Difficulty] | None = None
) -> list[TaskItem]:
    """n items of `task` with ids f"{id_prefix}-{i:06d}".

    `difficulties` fixes item i's difficulty (the shadow set stratifies with it); by default each
    item draws its own, uniformly.
    """
    if task not in _BUILDERS:
        raise ValueError(f"unknown task {task!r}; built-in tasks are {', '.join(TASKS)}")
    if difficulties is not None and len(difficulties) != n:
        raise ValueError(f"difficulties has {len(difficulties)} entries for {n} items")
    build, key = _BUILDERS[task], f"{id_prefix}|{task}|{seed}"
    items = []
    for i in range(n):
        rng = random.Random(f"{key}|{i}")
        difficulty = difficulties[i] if difficulties is not None else rng.choice(DIFFICULTIES)
        # Yes/no labels are balanced exactly within each pair of consecutive items, in a per-pair order.
        yes = i % 2 != zlib.crc32(f"{key}|pair{i // 2}".encode()) & 1
        question, context, answer = build(_Item(rng), difficulty, yes)
        items.append(TaskItem(
            id=f"{id_prefix}-{i:06d}", task=task, question=question, context=context, answer=answer,
            difficulty=difficulty, prompt=render_prompt(question, context),
        ))
    return items


# ---------------------------------------------------------------------------------------------
# Names and words. Tables are sorted so they are identical in every process.

_HEADS = (
    "al an ar as bal bel bor bran bren cal cas cor dal dar del dor dren el em en fal fen fin gal gar gil "
    "gor hal har hel hol is jor jas kal kel kor lan lor lys mal mar mer mor nal nev nor or os pal per "
    "quen ral ren ros sal sel sor tal tam tor tes ul val var ven vor wen wil yar yel zan zel thal brin "
    "cav drel fir gwyn hask ives"
).split()
_MIDS = ("", "a", "e", "i", "o", "ra", "li", "ve", "do", "ma", "ne", "sa", "ri")
_MIDS2 = ("", "ra", "li", "ve", "do", "ma", "ne", "sa", "ri", "to", "ber", "len")
# ~12,000 stems; a name is a stem plus a tail of its kind, so each kind has ~350,000 names. That many
# are needed: a town follows "in" or "near" in a large share of 30,000 items, and the bigram
# ("in", town) is new only while towns rarely repeat.
_STEMS = tuple(sorted({(h + m + m2).capitalize() for h in _HEADS for m in _MIDS for m2 in _MIDS2}))


def _table(tails: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return _STEMS, tuple(tails.split())


_GIVEN = _table("a ia in en on el is an ric wyn ette ius o eth ine ay ith us ora iel ard ek ice ela ando esse ian ey")
_SURNAMES = _table(
    "ley son wick ard ell ton ner ridge more ovic ani berg holt well by mont stone ski field ham worth "
    "combe lock shaw quist ez ini ault ing den"
)
_TOWNS = _table(
    "ford wick holm dale by stead mere port ton burg ville haven bridge field moor gate cross wood "
    "minster thorpe ness ley fell mouth hollow reach brook combe garth wold"
)
_RIVERS = _table("ra on et ine wy ash ell und isa or ane ey ath orn ia uin")
_LANDS = _table("ia land mark ovia ara eth istan onia")

_COMPANY_KINDS = (
    "Works Mills Foundry Press Brewery Shipyard Ironworks Textiles Glassworks Potteries Bank Railways "
    "Instruments Chemicals Motors Tannery Papermill Optics Clockworks Ceramics Distillery Canning"
).split()
_VENUES = "Market Fair Depot Workshop Bazaar Harbor Station School Library Bakery Warehouse Orchard Garden Store Museum Mill".split()
_OCCUPATIONS = (
    "shipwright cartographer glassblower weaver astronomer botanist printer clockmaker surveyor "
    "architect engraver bookbinder brewer chemist composer sculptor physician lawyer banker potter "
    "tailor violinist poet novelist engineer geologist stonemason blacksmith carpenter teacher "
    "journalist photographer painter miller baker apothecary mapmaker navigator librarian judge"
).split()
_PRODUCTS = (
    "lamps bicycles pianos ropes sails bells clocks maps lenses barrels tiles carpets boots hats "
    "saddles soap candles paper ink glass nails anchors stoves looms telescopes"
).split()
_COLORS = (
    "red blue green yellow amber teal crimson violet ochre ivory scarlet indigo olive silver golden "
    "copper bronze maroon navy turquoise lilac coral cobalt emerald saffron charcoal jade plum striped "
    "speckled painted glazed polished tiny large wooden clay glass paper woolen"
).split()
_UNITS = (
    "marbles pencils crayons stickers bricks candles buttons seashells postcards lanterns tiles "
    "cupcakes muffins cookies bagels bolts screws tickets books comics stamps coins beads ribbons "
    "balloons kites bottles jars cups plates bowls spoons socks gloves towels pillows roses tulips "
    "seedlings pumpkins melons peaches walnuts chestnuts pebbles crystals feathers keys bells "
    "whistles puzzles maps brushes envelopes notebooks magnets batteries bulbs ropes buckets "
    "baskets lemons pears plums"
).split()
_HEAVY = "brick melon anvil log barrel stone sack drum bell tile".split()
_PACKS = "boxes crates bags cartons sacks trays packs tins bundles parcels barrels cases".split()
_MONTHS = "January February March April May June July August September October November December".split()
_BUILDINGS = "Opera House,Town Hall,Bridge,Library,Observatory,Lighthouse,Museum,Station,Theatre,Market Hall".split(",")
_TOWERS = "clock tower,bell tower,lighthouse,water tower,watchtower,radio mast,church spire,windmill".split(",")
_CATEGORIES = "reptiles rodents birds insects amphibians spiders snails bats fish beetles".split()
_FESTIVALS = "winter fair,lantern festival,skating race,harvest market,fishing contest,music festival".split(",")
_GENRES = "novel memoir play travelogue satire".split()
_TITLE_NOUNS = "Lanterns Winter Orchard Ferry Letters Harbor Clocks Salt Bells Ashes Tides Maps".split()


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
    "P": _Item.person, "C": _Item.company, "L": _Item.place,
    "G": lambda it: it.fresh(_GIVEN), "T": lambda it: it.fresh(_TOWNS), "R": lambda it: it.fresh(_RIVERS),
    "occ": lambda it: it.pick(_OCCUPATIONS), "Occ": lambda it: it.pick(_OCCUPATIONS).capitalize(),
    "a_occ": lambda it: _article(it.pick(_OCCUPATIONS)),
    "prod": lambda it: it.pick(_PRODUCTS), "yr": lambda it: str(it.randint(1800, 2015)),
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


def _given(person: str) -> str:
    return person.split()[0]


def _words(text: str) -> int:
    """Whitespace-separated words: cheap, and never more than the text's tokens (every word here holds one)."""
    return text.count(" ") + 1


_FRAME_WORDS = len(render_prompt("", "x").split()) - 1  # "Context:", "Question:" and the instruction


def _pad(it: _Item, body: list[str], extra: int, aside: Callable[[], tuple[str, str]]) -> list[str]:
    """Insert asides until the prompt has MIN_PROMPT_TOKENS words.

    `aside()` returns a sentence and the full name it speaks of ("" for none): the sentence goes
    after the first sentence, and after the first one that introduces that name.
    """
    count = _FRAME_WORDS + extra + sum(_words(s) for s in body)
    while count < MIN_PROMPT_TOKENS:
        sentence, about = aside()
        first = next((i for i, s in enumerate(body) if about in s), 0)
        body.insert(it.randint(first + 1, len(body)), sentence)
        count += _words(sentence)
    return body


# Asides: elaboration that no question asks about. {g} is the given name of a question's person.
_PERSON_ASIDES = (
    "{g} trained {P1}, {P2} and {P3}.", "{P1} and {P2} taught {g} in {T1}.", "{g} married {P1} in {T1}.",
    "{g} befriended {P1} in {T1} and {P2} in {T2}.", "{g} visited {T1}, {T2} and {T3} with {P1}.",
    "{g} joined {C1} alongside {P1}.", "{g} hosted {P1} and {P2} at {L1}.", "{g} outlived {P1} and {P2}.",
    "{g} sponsored {C1} and {C2}.", "{P1} painted {g} for {C1}.",
)
_WORLD_ASIDES = (
    "{T1} supplies {T2}, {T3} and {T4}.", "{P1} governs {T1}; {P2} governs {T2}.", "{C1} serves {T1}, {T2} and {T3}.",
    "{P1} painted {T1} and {T2}.", "{T1} borders {T2} and {T3}.", "{P1} and {P2} rebuilt {T1} for {C1}.",
    "{C1} bought {C2} from {P1}.", "{P1} mapped {T1}, {T2} and {T3}.",
)


# ---------------------------------------------------------------------------------------------
# GSM8K-style: a running quantity changed by 2 (easy), 3 (medium) or 4–5 (hard) arithmetic operations.

# kind -> (operations it costs, templates). Known fields: {h} hero, {a} hero's given name, {s} "{a}'s",
# {u} unit, {c} colour, {pk} container, {k}/{m} numbers, {x} "doubles"/"triples"/"quadruples",
# {with} the given names a share is split with, {everyone} the same with the hero first.
_STOCK_STEPS = {
    "add": (1, (
        "{P1} gives {a} {k} more.", "{a} buys {k} more at {L1}.", "{L1} delivers {k} more to {a}.",
        "{P1} of {T1} sends {a} {k} {u}.", "{a} wins {k} {u} from {P1}.", "{P1} brings {a} {k} extra {u}.",
        "{a} gets {k} {u} from {P1} in {T1}.",
    )),
    "sub": (1, (
        "{a} gives {k} to {P1}.", "{a} sells {k} {u} to {P1} of {T1}.", "{a} loses {k} {u} near {L1}.",
        "{P1} borrows {k} {u} from {a}.", "{a} donates {k} {u} to {L1}.", "{P1} of {T1} buys {k} {u} from {a}.",
    )),
    "mul": (1, ("{P1} {x} {s} {u}.", "A deal with {P1} {x} {s} {u}.", "A trade at {L1} {x} {s} {u}.")),
    "div": (1, (
        "{a} shares the {u} equally with {with}, keeping one share.",
        "{a} splits the {u} evenly among {everyone}.",
        "{a} packs the {u} into {k} equal {pk}, keeps one, and gives {P1} the rest.",
    )),
    "add_prod": (2, (
        "{a} buys {k} {pk} of {m} {u} at {L1}.", "{P1} sends {a} {k} {pk} of {m} {u}.",
        "{a} picks up {k} {pk} holding {m} {u} each from {P1}.",
    )),
    "sub_prod": (2, (
        "{a} ships {k} {pk} of {m} {u} to {L1}.", "{P1} takes {k} {pk} of {m} {u} from {a}.",
        "{a} fills {k} {pk} with {m} {u} each for {P1}.",
    )),
}
_STOCK_START = (
    "{h} of {T1} owns {v} {c} {u}.", "{h} keeps {v} {c} {u} at {L1}.", "At {L1}, {h} stores {v} {c} {u}.",
    "{h} collected {v} {c} {u} in {T1}.", "{h} has {v} {c} {u} from {T1}.",
)
_STOCK_QUESTIONS = (
    "How many {u} does {h} have now?", "How many {u} does {a} own at the end?",
    "How many {u} are left with {h}?", "What is {s} final count of {u}?",
)
_MONEY_STEPS = {
    "add": (1, (
        "{a} earns {k} from {P1}.", "{P1} pays {a} {k}.", "{a} sells {P1} a bike for {k}.",
        "{P1} of {T1} gives {a} {k}.", "{a} wins {k} at {L1}.",
    )),
    "sub": (1, (
        "{a} spends {k} at {L1}.", "{a} pays {P1} {k}.", "{a} lends {P1} {k}.", "{a} donates {k} to {L1}.",
        "A coat from {L1} costs {a} {k}.",
    )),
    "mul": (1, ("A prize from {L1} {x} {s} money.", "{P1} {x} {s} savings.")),
    "div": (1, (
        "{a} splits the money equally with {with}, keeping one share.",
        "{a} divides the money into {k} equal envelopes, keeps one, and gives {P1} the rest.",
    )),
    "add_prod": (2, ("{a} works {k} hours at {L1} for {m} an hour.", "{a} sells {P1} {k} {u} at {m} each.")),
    "sub_prod": (2, ("{a} buys {k} {u} at {L1} for {m} each.", "{a} pays {P1} for {k} lessons at {m} each.")),
}
_MONEY_START = ("{h} of {T1} has {v} saved.", "{h} keeps {v} at {L1}.", "{h} starts {mo} with {v}.")
_MONEY_QUESTIONS = (
    "How many dollars does {h} have now?", "How much money does {a} have left, in dollars?",
    "How many dollars remain with {h}?",
)
_GSM_ASIDES = (
    "{P1} and {P2} help {a} at {L1}.", "{a} rents from {P1} near {L1}.", "{P1} of {T1} advises {a} and {P2}.",
    "{s} cousin {P1} visits {T1} with {P2}.", "{a} and {P1} run {L1} for {P2}.", "{P1} of {T1} keeps {s} accounts.",
    "{s} sister {G1} teaches {P1} and {P2}.", "{a} trained {P1}, {P2} and {P3}.", "{P1} is {s} neighbor at {L1}.",
)
_TIMES = {2: "doubles", 3: "triples", 4: "quadruples"}


def _gsm8k(it: _Item, difficulty: Difficulty, _yes: bool) -> tuple[str, str, str]:
    hero = it.person()
    money = it.random() < 0.35
    steps, starts, questions = (
        (_MONEY_STEPS, _MONEY_START, _MONEY_QUESTIONS) if money else (_STOCK_STEPS, _STOCK_START, _STOCK_QUESTIONS)
    )
    a = _given(hero)
    known = {"h": hero, "a": a, "s": f"{a}'s", "u": it.pick(_UNITS), "c": it.pick(_COLORS),
             "pk": it.pick(_PACKS), "mo": it.pick(_MONTHS)}
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


# ---------------------------------------------------------------------------------------------
# HotpotQA-style: two paragraphs joined by a bridge entity, or two entities compared. Distractors
# are paragraphs of the same shape about other entities: easy 0, medium 1, hard 3.

_BIRTH = (  # p born in t in y
    "{p} ({y}) was born in {t}.", "{Occ} {p} was born {y} in {t}.", "{p} (born {t}, {y}) is {a_occ}.",
    "{t}-born {p} ({y}) became {a_occ}.", "{Occ} {p} is a native of {t}, born {y}.",
)
_ON_RIVER = (  # town t lies on river r
    "{t} lies on the {r} near {T1}.", "The {r} flows through {t} and {T1}.",
    "{t}, a town of {pop} on the {r}, borders {T1}.", "{t} stands on the {r}, upstream of {T1}.",
)
_EMPLOYED = (  # p works for company c
    "{p} works for {c} as {a_occ}.", "{c} hired {p} in {yr}.", "{p} joined {c} in {yr}.",
    "Since {yr}, {c} has employed {p}.",
)
_BASED = (  # company c, founded y, is based in t
    "{c} ({y}) is based in {t}.", "{c}, founded {y}, is headquartered in {t}.", "{t} is home to {c}, founded {y}.",
    "Since {y}, {c} has made {prod} in {t}.",
)
_FOUNDED_BY = (  # person p founded company c in y
    "{p} founded {c} in {y}.", "{c} was founded by {p} in {y}.", "In {y}, {p} set up {c} to make {prod}.",
)
_WROTE = (  # person p wrote work w
    "{w} ({yr}) is a {genre} by {p}.", "{p} wrote {w}, a {genre}, in {yr}.", "{w} ({yr}) is the best-known {genre} of {p}.",
)
_RIVER_LENGTH = (  # river r is km long
    "The {r} runs {km} km from {T1} to {T2}.", "Rising near {T1}, the {r} flows {km} km to {T2}.",
    "The {r} ({km} km) reaches the sea at {T1}.",
)
_POPULATION = (  # town t has pop inhabitants
    "{t}, on the {R1}, has {pop} inhabitants.", "{pop} people live in {t}, near {T1}.", "{t} counted {pop} residents in {yr}.",
)


def _hotpotqa(it: _Item, difficulty: Difficulty, yes: bool) -> tuple[str, str, str]:
    paragraphs, distractor, question, answer, people = it.pick(_HOTPOT_KINDS)(it, yes)
    for _ in range({"easy": 0, "medium": 1, "hard": 3}[difficulty]):
        paragraphs.append(distractor())
    it.rng.shuffle(paragraphs)
    count = _FRAME_WORDS + _words(question) + sum(_words(p) for p in paragraphs)
    while count < MIN_PROMPT_TOKENS:
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

    q = it.pick((
        f"On which river lies the birthplace of {person}?", f"{person} was born beside which river?",
        f"Which river flows past the birthplace of {person}?", f"The town where {person} was born lies on which river?",
    ))
    return paras, distract, q, river, [person]


def _bridge_employer(it: _Item, yes: bool):
    person, company, town = it.person(), it.company(), it.fresh(_TOWNS)
    paras = [it.fill_one(_EMPLOYED, p=person, c=company), it.fill_one(_BASED, c=company, t=town, y=_year(it, 1750, 2005))]

    def distract() -> str:
        if it.random() < 0.5:
            return it.fill_one(_EMPLOYED, p=it.person(), c=it.company())
        return it.fill_one(_BASED, c=it.company(), t=it.fresh(_TOWNS), y=_year(it, 1750, 2005))

    q = it.pick((
        f"In which town is the employer of {person} based?", f"Where is the company employing {person} headquartered?",
        f"{person} works for a company based in which town?",
    ))
    return paras, distract, q, town, [person]


def _bridge_founder(it: _Item, yes: bool):
    company, person, town = it.company(), it.person(), it.fresh(_TOWNS)
    born = _year(it, 1760, 1960)
    paras = [it.fill_one(_FOUNDED_BY, c=company, p=person, y=born + it.randint(22, 60)),
             it.fill_one(_BIRTH, p=person, t=town, y=born)]

    def distract() -> str:
        if it.random() < 0.5:
            return it.fill_one(_FOUNDED_BY, c=it.company(), p=it.person(), y=_year(it, 1790, 2010))
        return it.fill_one(_BIRTH, p=it.person(), t=it.fresh(_TOWNS), y=_year(it, 1760, 1960))

    q = it.pick((
        f"Where was the founder of {company} born?", f"{company} was founded by someone born in which town?",
        f"In which town was the founder of {company} born?",
    ))
    return paras, distract, q, town, [person]


def _title(it: _Item) -> str:
    noun = it.pick(_TITLE_NOUNS)
    return it.pick((f"The {noun} of {it.fresh(_TOWNS)}", f"{it.fresh(_GIVEN)}'s {noun}", f"{noun} over {it.fresh(_TOWNS)}"))


def _bridge_author(it: _Item, yes: bool):
    work, person, born = _title(it), it.person(), _year(it)
    genre = it.pick(_GENRES)
    paras = [it.fill_one(_WROTE, w=work, p=person, genre=genre), it.fill_one(_BIRTH, p=person, t=it.fresh(_TOWNS), y=born)]

    def distract() -> str:
        if it.random() < 0.5:
            return it.fill_one(_WROTE, w=_title(it), p=it.person(), genre=it.pick(_GENRES))
        return it.fill_one(_BIRTH, p=it.person(), t=it.fresh(_TOWNS), y=_year(it))

    q = it.pick((
        f"In what year was the author of {work} born?", f"The writer of {work} was born in which year?",
        f"{work} was written by someone born in which year?",
    ))
    return paras, distract, q, str(born), [person]


def _compare_founded(it: _Item, yes: bool):
    a, b = it.company(), it.company()
    va, vb = it.rng.sample(range(1750, 2010), 2)
    paras = [it.fill_one(_BASED, c=a, t=it.fresh(_TOWNS), y=va), it.fill_one(_BASED, c=b, t=it.fresh(_TOWNS), y=vb)]
    distract = lambda: it.fill_one(_BASED, c=it.company(), t=it.fresh(_TOWNS), y=_year(it, 1750, 2010))  # noqa: E731
    q = it.pick((f"Which was founded earlier, {a} or {b}?", f"Which is older, {a} or {b}?",
                 f"{a} or {b}: which was established first?"))
    return paras, distract, q, a if va < vb else b, []


def _compare_born(it: _Item, yes: bool):
    a, b = it.person(), it.person()
    ya, yb = it.rng.sample(range(1780, 1995), 2)
    paras = [it.fill_one(_BIRTH, p=a, t=it.fresh(_TOWNS), y=ya), it.fill_one(_BIRTH, p=b, t=it.fresh(_TOWNS), y=yb)]
    distract = lambda: it.fill_one(_BIRTH, p=it.person(), t=it.fresh(_TOWNS), y=_year(it))  # noqa: E731
    q = it.pick((f"Who was born first, {a} or {b}?", f"Who is older, {a} or {b}?", f"{a} or {b}: who was born earlier?"))
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
    paras = [it.fill_one(_BIRTH, p=a, t=town, y=_year(it)),
             it.fill_one(_BIRTH, p=b, t=town if yes else it.fresh(_TOWNS), y=_year(it))]
    distract = lambda: it.fill_one(_BIRTH, p=it.person(), t=it.fresh(_TOWNS), y=_year(it))  # noqa: E731
    q = it.pick((f"Were {a} and {b} born in the same town?", f"Do {a} and {b} share a birthplace?"))
    return paras, distract, q, "yes" if yes else "no", [a, b]


_HOTPOT_KINDS = (
    _bridge_river, _bridge_employer, _bridge_founder, _bridge_author,
    _compare_founded, _compare_born, _compare_river, _compare_population, _compare_same_town,
)


# ---------------------------------------------------------------------------------------------
# StrategyQA-style: a yes/no question whose answer needs an unstated step (lifetimes overlap, a
# weight limit, speed × time, water freezes below zero) over facts given in the context. Easy: the
# needed facts; medium: plus one distractor fact; hard: a variant needing one more fact or
# arithmetic step, plus two distractors. Each kind builds its numbers to fit the drawn label.

_LIFESPAN = ("{p} lived {b}–{d}.", "{p} was born {b} and died {d}.", "{p} ({b}–{d}) was {a_occ} from {T1}.")


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
    facts = [it.fill_one(_LIFESPAN, p=a, b=born_a, d=died_a),
             f"{b} was born {born_b} and died aged {life_b}." if hard else it.fill_one(_LIFESPAN, p=b, b=born_b, d=born_b + life_b)]
    q = it.pick((f"Could {a} have met {b}?", f"Were {a} and {b} ever alive at once?", f"Could {a} have written to {b}?"))
    return q, facts, [a, b]


def _sq_opening(it: _Item, yes: bool, hard: bool):
    r = it
    person, building = it.person(), f"{it.fresh(_TOWNS)} {it.pick(_BUILDINGS)}"
    born = r.randint(1600, 1930)
    died = born + r.randint(45, 90)
    opened = r.randint(born + 8, died - 2) if yes else r.pick((r.randint(died + 2, died + 90), r.randint(born - 90, born - 2)))
    facts = [it.fill_one(_LIFESPAN, p=person, b=born, d=died)]
    if hard:
        older, gap = f"{it.fresh(_TOWNS)} {it.pick(_BUILDINGS)}", r.randint(3, 60)
        facts += [f"The {building} opened {gap} years after the {older}.", f"The {older} opened {opened - gap}."]
    else:
        facts.append(it.fill_one(("The {bl} opened {y}.", "{P1} opened the {bl} in {y}."), bl=building, y=opened))
    q = it.pick((f"Could {person} have attended the opening of the {building}?", f"Was {person} alive when the {building} opened?"))
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
        facts.append(it.pick((f"{person} of {land} was born {born}.", f"{person}, citizen of {land}, was born {born}.")))
    q = it.pick((f"Could {person} vote in the {land} election of {year}?", f"Was {person} old enough to vote in {land} in {year}?"))
    return q, facts, [person]


def _sq_lift(it: _Item, yes: bool, hard: bool):
    r = it
    person, thing, town = it.person(), it.pick(_HEAVY), it.fresh(_TOWNS)
    each, count = r.randint(2, 9), r.randint(4, 30)
    crate = r.randint(3, 12) if hard else 0
    total = each * count + crate
    limit = total + r.randint(2, 25) if yes else total - r.randint(2, min(25, total - 1))
    facts = [f"Each {town} {thing} weighs {each} kg.",
             it.pick((f"{person} can lift {limit} kg.", f"{person} lifts {limit} kg at most."))]
    if hard:
        facts.append(f"The empty crate itself weighs {crate} kg.")
    q = it.pick((f"Could {person} lift a crate of {count} {town} {thing}s?", f"Can {person} carry {count} {town} {thing}s in a crate alone?"))
    return q, facts, [person]


def _sq_walk(it: _Item, yes: bool, hard: bool):
    r = it
    person, a, b = it.person(), it.fresh(_TOWNS), it.fresh(_TOWNS)
    speed, hours = r.randint(3, 6), r.randint(3, 11)
    rest = r.randint(1, 2) if hard else 0
    reach = speed * (hours - rest)
    dist = r.randint(max(2, reach - 12), reach - 1) if yes else r.randint(reach + 1, reach + 12)
    facts = [f"{a} lies {dist} km from {b}.", f"{person} walks {speed} km an hour.",
             f"{person} leaves {a} {hours} hours before nightfall."]
    if hard:
        facts.append(f"{person} rests {rest} hours at {it.place()} on the way.")
    q = it.pick((f"Could {person} walk from {a} to {b} before nightfall?", f"Will {person} reach {b} on foot before dark?"))
    return q, facts, [person]


def _sq_submerge(it: _Item, yes: bool, hard: bool):
    r = it
    town, lake, tower = it.fresh(_TOWNS), it.fresh(_RIVERS), it.pick(_TOWERS)
    depth = r.randint(30, 300)
    height = depth - r.randint(2, 15) if yes else depth + r.randint(2, 40)
    spire = r.randint(3, 12) if hard else 0
    facts = [f"Lake {lake} is {depth} m deep."]
    if hard:
        facts += [f"The {town} {tower} stands {height - spire} m without its spire.", f"The {town} spire adds {spire} m."]
    else:
        facts.append(f"The {town} {tower} is {height} m tall.")
    q = it.pick((f"Could the {town} {tower} be hidden completely under Lake {lake}?",
                 f"Would the {town} {tower} vanish entirely if sunk in Lake {lake}?"))
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
    q = it.pick((f"Would {person}'s pet {species} be let into {town} Market?", f"Can {person} take a pet {species} into {town} Market?"))
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
    q = it.pick((f"Can {person} afford {count} {unit} at {town} Fair?", f"Does {person} have coins enough for {count} {unit} in {town}?"))
    return q, facts, [person]


def _sq_frozen(it: _Item, yes: bool, hard: bool):
    r = it
    town, lake, festival = it.fresh(_TOWNS), it.fresh(_RIVERS), it.pick(_FESTIVALS)
    month = r.randint(0, 12 - 1)
    temp = -r.randint(3, 25) if yes else r.randint(3, 25)
    facts = [f"In {_MONTHS[month]}, Lake {lake} averages {temp} degrees Celsius."]
    if hard:
        facts.append(f"{town} holds its {festival} the month after {_MONTHS[month - 1]}.")
    else:
        facts.append(f"The {town} {festival} takes place every {_MONTHS[month]}.")
    q = it.pick((f"Would Lake {lake} be frozen during the {town} {festival}?",
                 f"Could skaters cross Lake {lake} during the {town} {festival}?"))
    return q, facts, []


def _sq_before_birth(it: _Item, yes: bool, hard: bool):
    r = it
    company, person = it.company(), it.person()
    born = r.randint(1750, 1990)
    founded = born - r.randint(2, 120) if yes else born + r.randint(2, min(120, 2022 - born))
    facts = [f"{person} was born {born}."]
    if hard:
        gap, town = r.randint(3, 40), it.fresh(_TOWNS)
        facts += [f"{company} was founded {gap} years after the {town} fire.", f"The {town} fire broke out in {founded - gap}."]
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


_SQ_KINDS = (_sq_met, _sq_opening, _sq_vote, _sq_lift, _sq_walk, _sq_submerge, _sq_market, _sq_afford,
             _sq_frozen, _sq_before_birth, _sq_read)


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


_BUILDERS: dict[str, Callable[[_Item, Difficulty, bool], tuple[str, str, str]]] = {
    "gsm8k": _gsm8k, "hotpotqa": _hotpotqa, "strategyqa": _strategyqa,
}
