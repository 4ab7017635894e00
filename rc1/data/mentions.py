"""The pages `wiki` looks up under `data.pages: mentions`: a page per name, every unit of the context that names it.

Under `data.pages: titles` (rc1/data/pages.py, issue 43) each unit of the context belongs to one page, titled by its
heading or its leading name, so a name the question holds opens a page only where some unit leads with it: "Zanneneworth
Foundry hired Gilvedous Salratowell in 1923." is the Foundry's page, and `wiki("Gilvedous Salratowell")` misses. A
policy that reads the question cannot know which unit leads with what, so on the embedded default's pool 20–24 % of the
first gold calls name a page the question does not name (measured on 3,000 generated items; docs/DESIGN.md §12).

Here a name's page is every sentence of the context that holds it as a whole phrase (case and spacing aside; "Ana
Bel's" and "Ana Bel-born" hold "Ana Bel"), in context order, one a line: the question's names open pages, and so does
every name of a page read, so a path through the material is one a reader can follow by copying names. A sentence, not
its paragraph: a generated paragraph is one fact padded with asides about other names, and the page of a name is what
is said of it. A key must name something: at least one word that is neither a function word, a common
word nor a number (`wiki("the")` is a miss), so a lookup is a lookup, not a scan of the material.
"""

from __future__ import annotations

import re

from rc1.data.pages import NOT_NAMES, normal, units

_WORD = re.compile(r"[\w'’-]+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
# Lower-case words too common to name anything (rc1/data/gold_trajectory.py reads rare words of a question with it).
COMMON = frozenset(
    "could would should have been with from that this what which when where were does than into over under after "
    "before ever alone once their there they them your about also each every some many more most much such only "
    "same other another either both being make made take took come came here just like then well still even".split()
)


def is_key(key: str) -> bool:
    """Whether `key` can name a page: it holds a word that is no function word, common word or number."""
    return any(
        len(word) > 2 and word.capitalize() not in NOT_NAMES and word.casefold() not in COMMON and not word.isdigit()
        for word in _WORD.findall(key)
    )


def holds(text: str, key: str) -> bool:
    """`text` holds `key` as a whole phrase, case and spacing aside (a possessive or a hyphenated suffix after it
    counts: "Ana Bel's", "Ana Bel-born")."""
    wanted = normal(key)
    return bool(wanted) and re.search(rf"(?<![\w'’-]){re.escape(wanted)}(?![\w’])", normal(text)) is not None


def passages(context: str) -> list[str]:
    """The context's sentences, in order: what a page is made of."""
    return [s for unit in units(context) for s in _SENTENCE.split(unit) if s.strip()]


def mention_page(context: str, key: str) -> str | None:
    """The page of `key`: the context's sentences that hold it, in order, one a line; None when it names nothing."""
    if not is_key(key):
        return None
    found = [passage for passage in passages(context) if holds(passage, key)]
    return "\n".join(found) if found else None
