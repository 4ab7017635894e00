"""Per-item difficulty metrics and the easy/medium/hard bucket they vote for.

Each dimension votes easy, medium or hard by the table below; the bucket is the
majority vote (a tie goes to medium). Dimensions that say nothing about an item
(clue_overlap without context, tool_hops without tools) abstain.
"""

from __future__ import annotations

import re

import msgspec

from rc1.checks.text import ngrams, normalize, tokens
from rc1.data.task import Difficulty, TaskItem

# English and Chinese discourse connectors: density of reasoning glue per 100 words.
CONNECTORS_EN = frozenset(
    "because therefore however although then so since thus hence while whereas after before "
    "unless if but and meanwhile consequently moreover furthermore later first finally".split()
)
CONNECTORS_ZH = ("因为", "所以", "但是", "然后", "而且", "如果", "因此", "虽然", "于是", "并且", "然而", "之后")
PRONOUNS = frozenset("he she it they him her them his hers its their theirs himself herself itself themselves".split())
AMBIGUOUS = frozenset("some several few many about around roughly approximately recently soon certain various".split())
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_ENTITY = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)*")
_OPERATION_WORDS = re.compile(r"\b(?:each|per|times|twice|half|total|more|less|fewer|remaining|left|share|split|every)\b", re.I)


class ItemMetrics(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    task: str
    len_tokens: int
    turns: int
    tool_hops: int
    entities: int
    ops_numeric: int
    connector_density: float  # connectors per 100 words
    coref_pronouns: int
    clue_overlap: float | None  # question-vs-context word 3-gram Jaccard; None without context
    ambiguity_flags: int
    needs_clarification: bool


# dimension -> (easy when value <= a, hard when value >= b); clue_overlap is reversed (more overlap = easier).
BUCKET_TABLE: dict[str, tuple[float, float]] = {
    "len_tokens": (60, 140),
    "turns": (1, 3),
    "tool_hops": (0, 2),
    "entities": (3, 8),
    "ops_numeric": (2, 5),
    "connector_density": (4.0, 8.0),
    "coref_pronouns": (1, 4),
}
CLUE_OVERLAP_EASY_MIN = 0.40
CLUE_OVERLAP_HARD_MAX = 0.20


def measure(item: TaskItem) -> ItemMetrics:
    text = f"{item.context}\n{item.question}" if item.context else item.question
    words = tokens(text)
    lower = [w.lower() for w in words]
    connectors = sum(w in CONNECTORS_EN for w in lower) + sum(text.count(c) for c in CONNECTORS_ZH)
    return ItemMetrics(
        id=item.id,
        task=item.task,
        len_tokens=len(tokens(item.prompt)),
        turns=2 if item.needs_clarification else 1,
        tool_hops=0,
        entities=len(set(_ENTITY.findall(text))),
        ops_numeric=len(_NUMBER.findall(item.question)) + len(_OPERATION_WORDS.findall(item.question)),
        connector_density=100.0 * connectors / max(len(words), 1),
        coref_pronouns=sum(w in PRONOUNS for w in lower),
        clue_overlap=clue_overlap(item.question, item.context) if item.context else None,
        ambiguity_flags=sum(w in AMBIGUOUS for w in lower),
        needs_clarification=item.needs_clarification,
    )


def clue_overlap(question: str, context: str) -> float:
    q = set(ngrams(normalize(question).split(), 3))
    c = set(ngrams(normalize(context).split(), 3))
    union = q | c
    return len(q & c) / len(union) if union else 0.0


def votes(m: ItemMetrics) -> list[Difficulty]:
    cast: list[Difficulty] = []
    for name, (easy_max, hard_min) in BUCKET_TABLE.items():
        value = getattr(m, name)
        cast.append("easy" if value <= easy_max else "hard" if value >= hard_min else "medium")
    if m.clue_overlap is not None:
        cast.append("easy" if m.clue_overlap >= CLUE_OVERLAP_EASY_MIN else "hard" if m.clue_overlap <= CLUE_OVERLAP_HARD_MAX else "medium")
    return cast


def bucket(m: ItemMetrics) -> Difficulty:
    cast = votes(m)
    counts = {d: cast.count(d) for d in ("easy", "medium", "hard")}
    top = max(counts.values())
    winners = [d for d, c in counts.items() if c == top]
    return winners[0] if len(winners) == 1 else "medium"
