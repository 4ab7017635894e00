"""Per-item difficulty metrics and the easy/medium/hard bucket they vote for.

Each dimension votes easy, medium or hard by `BUCKET_TABLE`; the bucket is the plurality of the
votes cast (a tie goes to medium). A dimension that says nothing about an item abstains: clue_overlap
without a context, the counts in `ABSTAIN_AT_ZERO` at zero, needs_clarification when false.
A live episode's difficulty rows are its own (the recorded rows measure the template). Skipped by name on a live item
(`LIVE_SKIPPED`): clue_overlap (the overlap is a feature of the recorded template, where an easy item restates
its context sentence; a live item's question is the bare question by design, its evidence reached through wiki, so it
would vote hard on nearly every live item), turns and len_tokens (on a live item they only restate whether it asks,
which needs_clarification already votes, and how long the served material is, which the tool hops already count).
A live item's tool_hops vote by its task's row in `LIVE_TOOL_HOPS`, cut where the task's generator builds its
difficulties (the comment there), not at quantiles of a pool; a task without a row abstains on it.
The vote's margin (votes for the winner minus the runner-up) ranks how typical an item is of its
bucket; rebalancing keeps the most typical ones.

Definitions (per item):
- len_tokens: tokens of the whole prompt (`rc1.data.text.tokens`); turns: user turns of the episode;
  tool_hops: tool calls before the last user turn.
  A live item (`<task>/live`) is shown its question alone and finds the rest with tools, so these three come from its
  rollout, and before training the one rollout there is is its gold trajectory (rc1/data/gold_trajectory.py, replayed
  through the item's environment): tool_hops = its successful wiki/calc calls, turns = 1 + its asks, len_tokens = the
  prompt plus every successful result it reads (pages, calc results, the user's reply).
- tool_rounds (live items only; None for a recorded one, whose tool steps are written into its prompt): the calls of its
  gold trajectory, ask included, each its own round of tool results — calls that do not depend on each other could
  share a round, but the gold path makes them one at a time. `data.max_tool_rounds` bounds a live rollout's rounds.
- entities: distinct capitalized names (not sentence-initial) in context + question.
- ops_numeric: numbers plus arithmetic words (each, per, times, half, total, …) in the question.
- connector_density: English and Chinese discourse connectors per 100 words of context + question.
- coref_pronouns: third-person pronouns in context + question.
- clue_overlap: word 3-gram Jaccard between a sentence of the question and a sentence of the context,
  at the pair that overlaps most — a whole-context Jaccard would measure the context's length rather
  than how plainly the question points at its evidence (a question that restates its evidence
  sentence scores 1); None without a context.
- ambiguity_flags: vague quantifiers (some, several, about, …); needs_clarification: the item's flag.
"""

from __future__ import annotations

import re

import msgspec

from rc1.data.environment import PageModel
from rc1.data.episodes import dressed_live
from rc1.data.gold_trajectory import replay
from rc1.data.task import DIFFICULTIES, Difficulty, TaskItem
from rc1.data.text import SENTENCE_BREAK, ngrams, normalize, tokens

CONNECTORS_EN = frozenset(
    "because therefore however although then so since thus hence while whereas after before "
    "unless if but and meanwhile consequently moreover furthermore later first finally".split()
)
CONNECTORS_ZH = ("因为", "所以", "但是", "然后", "而且", "如果", "因此", "虽然", "于是", "并且", "然而", "之后")
PRONOUNS = frozenset("he she it they him her them his hers its their theirs himself herself itself themselves".split())
AMBIGUOUS = frozenset("some several few many about around roughly approximately recently soon certain various".split())
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_ENTITY = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)*")
_OPERATION_WORDS = re.compile(
    r"\b(?:each|per|times|twice|half|total|more|less|fewer|remaining|left|share|split|every|doubles|triples|quadruples)\b",
    re.I,
)


class ItemMetrics(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    id: str
    task: str
    len_tokens: int
    turns: int
    tool_hops: int
    entities: int
    ops_numeric: int
    connector_density: float
    coref_pronouns: int
    clue_overlap: float | None
    ambiguity_flags: int
    needs_clarification: bool
    # Last, defaulted and left out at None, so a recorded item's metrics encode as they did before live items.
    tool_rounds: int | None = None

    @property
    def live(self) -> bool:
        """Measured as a live episode (on its gold trajectory), not as a recorded prompt."""
        return self.tool_rounds is not None


# dimension -> (easy when value <= a, hard when value >= b). clue_overlap is reversed (see below).
BUCKET_TABLE: dict[str, tuple[float, float]] = {
    "len_tokens": (112, 130),
    "turns": (1, 2),
    "tool_hops": (0, 2),
    "entities": (12, 22),
    "ops_numeric": (3, 6),
    "connector_density": (2.0, 8.0),
    "coref_pronouns": (0, 2),
    "ambiguity_flags": (0, 2),
}
# Counts of a phenomenon the item may simply not have: zero says nothing, so they abstain at zero.
ABSTAIN_AT_ZERO = frozenset({"ops_numeric", "coref_pronouns", "ambiguity_flags"})
CLUE_OVERLAP_EASY_MIN = 0.40  # clue_overlap >= this votes easy
CLUE_OVERLAP_HARD_MAX = 0.20  # clue_overlap <= this votes hard
DIMENSIONS: tuple[str, ...] = (*BUCKET_TABLE, "clue_overlap", "needs_clarification")
# The dimensions a live item does not vote on: its question is shown bare, never restating the context (clue_overlap);
# its user turns are 1 + its asks (needs_clarification votes that) and its length is its prompt plus the material its
# gold path is served (tool_hops counts those reads): on a live item they restate other rows, so they do not vote twice.
LIVE_SKIPPED: frozenset[str] = frozenset({"clue_overlap", "turns", "len_tokens"})
# A live item's tool_hops row, per task: (easy when hops <= a, hard when hops >= b) on its gold path's successful
# wiki/calc calls. Each cut comes from how the task's generator builds its difficulties (rc1/data/generators/*), never
# from a pool's quantiles:
# - gsm8k: the operation budget is easy 2, medium 3, hard 4-5 (`_gsm8k`'s `budget`); each gold calc is one step
#   sentence of 1 or 2 operations, so easy <= 2 (at most the easy budget), hard >= 4 (the hard budget's least).
# - hotpotqa: every item, easy to hard, joins two paragraphs (a bridge entity or a comparison); difficulty is only the
#   distractors (0/1/3), which the gold path skips unless a name links them. So 2 pages is the design's norm at every
#   difficulty (medium); fewer (1: one page holds it) is easy, more (3+: it had to follow a linked distractor) is hard.
# - strategyqa: easy and medium items need "the needed facts" (2, one per entity; medium adds a distractor the gold
#   path does not read), a hard one a variant with one more fact or an arithmetic step (`_strategyqa`, `hard`): easy
#   <= 2 (the needed facts), hard >= 3 (one more fact); medium is not in hops by design, so this row never votes it.
LIVE_TOOL_HOPS: dict[str, tuple[float, float]] = {
    "gsm8k": (2, 4),
    "hotpotqa": (1, 3),
    "strategyqa": (2, 3),
}


def measure(item: TaskItem, pages_by: PageModel = "titles") -> ItemMetrics:
    """The item's metrics; a live item's on its gold path with its material cut into pages by `pages_by`
    (data.pages)."""
    text = f"{item.context}\n{item.question}" if item.context else item.question
    words = tokens(text)
    lower = [w.lower() for w in words]
    connectors = sum(w in CONNECTORS_EN for w in lower) + sum(text.count(c) for c in CONNECTORS_ZH)
    # The switch lives here, on the item, rather than in the callers or in config: every caller (the seed pool's
    # metrics and balance, a fresh item's bucket, the difficulty command) measures the item the policy is shown, the
    # item says how it is shown (its `<task>/live` template), and a recorded item takes exactly the path it took before.
    shown = _as_played(item, pages_by) if dressed_live(item) else (*_as_shown(item), None)
    len_tokens, turns, tool_hops, tool_rounds = shown
    return ItemMetrics(
        id=item.id,
        task=item.task,
        len_tokens=len_tokens,
        turns=turns,
        tool_hops=tool_hops,
        entities=len(set(_ENTITY.findall(text))),
        ops_numeric=len(_NUMBER.findall(item.question)) + len(_OPERATION_WORDS.findall(item.question)),
        connector_density=100.0 * connectors / max(len(words), 1),
        coref_pronouns=sum(w in PRONOUNS for w in lower),
        clue_overlap=clue_overlap(item.question, item.context) if item.context else None,
        ambiguity_flags=sum(w in AMBIGUOUS for w in lower),
        needs_clarification=item.needs_clarification,
        tool_rounds=tool_rounds,
    )


def _as_shown(item: TaskItem) -> tuple[int, int, int]:
    """A recorded episode's length, user turns and tool hops, read off its prompt as shown."""
    return len(tokens(item.prompt)), item.user_turns(), item.tool_hops


def _as_played(item: TaskItem, pages_by: PageModel) -> tuple[int, int, int, int]:
    """A live episode's length, user turns, tool hops and tool rounds on its gold trajectory: the prompt plus what each
    successful call's result serves, 1 + the asks, the successful wiki/calc calls, every call (one round each)."""
    made = replay(item, pages_by).calls
    calls = [c for c in made if c.ok]
    served = sum(len(tokens(c.result)) for c in calls)
    asks = sum(c.tool == "ask" for c in calls)
    hops = sum(c.tool in ("wiki", "calc") for c in calls)
    return len(tokens(item.prompt)) + served, 1 + asks, hops, len(made)


def clue_overlap(question: str, context: str) -> float:
    asked = [set(ngrams(normalize(s).split(), 3)) for s in SENTENCE_BREAK.split(question)]
    best = 0.0
    for sentence in SENTENCE_BREAK.split(context):
        found = set(ngrams(normalize(sentence).split(), 3))
        for part in asked:
            union = part | found
            if union:
                best = max(best, len(part & found) / len(union))
    return best


def votes(m: ItemMetrics, skip: frozenset[str] = frozenset()) -> dict[str, Difficulty]:
    """Each dimension's vote; abstaining dimensions, those in `skip` and a live item's `LIVE_SKIPPED` are absent."""
    skip = skip | skipped(m)
    cast: dict[str, Difficulty] = {}
    for name, row in BUCKET_TABLE.items():
        value = getattr(m, name)
        if name in skip or (name in ABSTAIN_AT_ZERO and value == 0):
            continue
        if m.live and name == "tool_hops":
            if m.task not in LIVE_TOOL_HOPS:
                continue  # no generator design to cut a live row from: it abstains
            row = LIVE_TOOL_HOPS[m.task]
        easy_max, hard_min = row
        cast[name] = "easy" if value <= easy_max else "hard" if value >= hard_min else "medium"
    if m.clue_overlap is not None and "clue_overlap" not in skip:
        cast["clue_overlap"] = (
            "easy"
            if m.clue_overlap >= CLUE_OVERLAP_EASY_MIN
            else "hard"
            if m.clue_overlap <= CLUE_OVERLAP_HARD_MAX
            else "medium"
        )
    if m.needs_clarification:
        cast["needs_clarification"] = "hard"
    return cast


def skipped(m: ItemMetrics) -> frozenset[str]:
    """The dimensions that do not vote on this item by what it is (not by what it measures)."""
    return LIVE_SKIPPED if m.live else frozenset()


def bucket_and_margin(m: ItemMetrics, skip: frozenset[str] = frozenset()) -> tuple[Difficulty, int]:
    cast = list(votes(m, skip).values())
    counts = sorted(((cast.count(d), d) for d in DIFFICULTIES), reverse=True)
    (top, winner), (second, _) = counts[0], counts[1]
    if top == second:
        return "medium", 0
    return winner, top - second


def bucket(m: ItemMetrics) -> Difficulty:
    return bucket_and_margin(m)[0]
