"""The pages `wiki` looks up: an item's context as a deterministic list of titled pages, derived, never stored.

The context's units are those a dressed episode's `wiki` step returns one of today (`rc1/data/episodes.py`): its
lines when it has several (HotpotQA-style paragraphs, loaded StrategyQA facts), else its sentences (generated
StrategyQA facts). Each unit gets a title by the rule below, and the units of one title (case- and
whitespace-insensitively) make one page, their text joined in context order: a page per entity, as an encyclopedia
has, so a title is never ambiguous and `wiki("Ana Bel")` returns every fact that leads with Ana Bel.

A unit's title, the first rule that applies:
1. a heading: the unit opens with `Title: ` (loaded HotpotQA writes each paragraph so; loaded StrategyQA its term),
   a title of at most 8 words;
2. the unit's leading named entity (`names`): the first name of its main clause (after a leading phrase such as
   "In 1850," or "Rising near Tamwick,"), else its first name anywhere;
3. else its first four words.

A name is a maximal run of capitalized words: a digit, a punctuation mark, a lowercase or a hyphenated word ends
it ("Korvenford-born Ana Bel" leads with Ana Bel; the stem still links the page to Korvenford's), a closing "'s" is
dropped ("Ana Bel's" -> "Ana Bel"), and words capitalized only because they open a sentence or are common nouns
(`NOT_NAMES`: function words, the generators' occupations and title nouns, months, weekdays) are no part of one.
Titles compare case- and whitespace-insensitively (`normal`).
"""

from __future__ import annotations

import re

import msgspec

from rc1.data.generators.names import MONTHS, OCCUPATIONS, TITLE_NOUNS

MAX_HEADING_WORDS = 8
_SENTENCE = re.compile(r"(?<=[.!?])\s+")  # as rc1/data/episodes.py splits a one-line context
_HEADING = re.compile(r"^([^:\n]+?):\s")
_TOKEN = re.compile(r"[\w'’-]+|[^\w\s]")
_FUNCTION_WORDS = (
    "A An The This That These Those It Its In At On Of For From To By With Into Over Under Since Before After "
    "During When While Where Which Who What Whose How Why If As And But Or Nor So Yet Each Every No Not All Both Some "
    "Any Many Most Few One Other Another Such Here There Then Rising Entry Zoologists Could Would Should Can Will Was "
    "Were Is Are Did Does Do Has Have Had Q I"
)
NOT_NAMES = frozenset(
    {*_FUNCTION_WORDS.split(), *(o.capitalize() for o in OCCUPATIONS), *TITLE_NOUNS, *MONTHS, "Celsius"}
    | {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}
)


class Page(msgspec.Struct, frozen=True, kw_only=True):
    title: str
    text: str


def pages(context: str) -> list[Page]:
    """The context's pages, in the order their titles first come; units of one title make one page."""
    lines = "\n" in context
    grouped: dict[str, tuple[str, list[str]]] = {}
    for unit in units(context):
        title = _title(unit)
        grouped.setdefault(normal(title), (title, []))[1].append(unit)
    return [Page(title=title, text=("\n" if lines else " ").join(units)) for title, units in grouped.values()]


def raw_titles(context: str) -> list[str]:
    """Each unit's title, before units of one title are made one page (what the uniqueness measurement counts)."""
    return [_title(unit) for unit in units(context)]


def units(context: str) -> list[str]:
    """The context's units: its lines when it has several, else its sentences."""
    parts = context.split("\n") if "\n" in context else _SENTENCE.split(context)
    return [part.strip() for part in parts if part.strip()]


def normal(text: str) -> str:
    """Case- and whitespace-insensitive form of a title or a query."""
    return " ".join(text.split()).casefold()


def names(text: str, *, stems: bool = True) -> list[str]:
    """The text's names in order (repeats kept): maximal runs of capitalized words, as the module docstring says;
    with `stems`, the capitalized stem of a hyphenated word too, as a name of its own ("Korvenford-born" ->
    "Korvenford"): a title never leads with one, but it links the page to the page of that name."""
    found: list[str] = []
    run: list[str] = []
    for token in [*_TOKEN.findall(text), "."]:
        possessive = token.endswith(("'s", "’s"))
        word = token[:-2] if possessive else token
        if _is_name_word(word):
            run.append(word)
            if not possessive:  # a possessive ends the name: "Ana Bel's pet" -> "Ana Bel"
                continue
        if run:
            found.append(" ".join(run))
            run = []
        stem = token.split("-")[0]
        if stems and "-" in token and _is_name_word(stem):
            found.append(stem)
    return found


def _is_name_word(word: str) -> bool:
    return word[:1].isupper() and word.replace("'", "").replace("’", "").isalpha() and word not in NOT_NAMES


def _title(unit: str) -> str:
    heading = _HEADING.match(unit)
    if heading and len(heading.group(1).split()) <= MAX_HEADING_WORDS:
        return heading.group(1).strip()
    words = unit.split()
    if words[0] in NOT_NAMES and any("," in w for w in words[:6]):  # "In 1850, …", "Rising near Tamwick, the …"
        main = names(unit.split(",", 1)[1], stems=False)
        if main:
            return main[0]
    found = names(unit, stems=False)
    return found[0] if found else " ".join(re.sub(r"[^\w\s'’-]", "", unit).split()[:4]) or unit[:40]
