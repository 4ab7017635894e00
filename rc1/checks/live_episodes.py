"""`live_episodes` (data.episodes: live, issue 43): every item can be played through its tools, and no pool item's
pages hold the held-out sets.

- Gold paths: each pool, shadow and gate item's gold trajectory (rc1/data/gold_trajectory.py `replay`) runs through
  the item's own `EpisodeEnvironment`: every call succeeds (every gold title is a page of the item, every calc step
  parses) and the gold answer is then reachable. An item whose gold path fails cannot be solved as the tools serve
  it: training rewards nothing on it, and a held-out one measures nothing.
- Leaks: a live policy reads a pool item's pages one `wiki` call at a time. The `leak` check compares whole items
  (question + context), so a held-out item's question, or one of its own pages, copied into one pool item passes it.
  Here every page of every pool item is compared with each held-out (shadow and gate) item's own material: its
  question, and each of its pages that names a name of its question (what answers it), by leak.py's measure
  (normalized text equal, or word n-gram containment at `preflight.leak_ngram` / `preflight.leak_similarity`). A
  held-out page that names nothing of its question is a fact of the generators' world, not the item's: the empty
  crate's weight ("The empty crate itself weighs 12 kg.") stands in generated StrategyQA items of every stream, and
  on configs/local.yaml run live 4 of the 600 pool items hold a page equal to a gate item's, all of them that one.

Recorded episodes: the check does not apply and records nothing (as `scorer_probe` without a judge), so a recorded
run's checks are those it had.
"""

from __future__ import annotations

from collections import Counter

from rc1.checks.leak import most_contained
from rc1.checks.result import CheckResult
from rc1.checks.spec import Check
from rc1.core.runbook import Runbook
from rc1.data.environment import PageModel
from rc1.data.gold_trajectory import replay
from rc1.data.mentions import mention_page
from rc1.data.pages import names, pages, units
from rc1.data.task import TaskItem
from rc1.data.text import normalize

SHOWN = 5  # items a detail names; the rest are counted


def live_episodes_check(
    pool: list[TaskItem],
    shadow: list[TaskItem],
    gate: list[TaskItem],
    ngram: int,
    similarity: float,
    pages_by: PageModel = "titles",
) -> CheckResult:
    """`pages_by`: how the material is cut into pages (data.pages): the gold paths and the pages read follow it."""
    items = pool + shadow + gate
    replayed = ((item, replay(item, pages_by)) for item in items)
    failed = [(item, gold) for item, gold in replayed if not gold.all_ok or not gold.reachable]
    leaks = find_page_leaks(pool, shadow + gate, ngram, similarity, pages_by)
    problems = []
    if failed:
        shown = "; ".join(f"{item.id} ({gold.why})" for item, gold in failed[:SHOWN])
        problems.append(f"{len(failed)} of {len(items)} items' gold paths fail: {shown}{_more(failed)}")
    if leaks:
        shown = "; ".join(f"{p} ~ {h} ({why})" for p, h, why in leaks[:SHOWN])
        problems.append(
            f"{len(leaks)} of {len(pool)} pool items hold held-out material in a page: {shown}{_more(leaks)}"
        )
    failed_by_task = Counter(item.task for item, _ in failed)
    return CheckResult(
        name="live_episodes",
        passed=not problems,
        measured={
            "items": float(len(items)),
            "pool_items": float(len(pool)),
            "held_out_items": float(len(shadow) + len(gate)),
            "gold_failed": float(len(failed)),
            "calls_failed": float(sum(not gold.all_ok for _, gold in failed)),
            "unreachable": float(sum(not gold.reachable for _, gold in failed)),
            "leaked": float(len(leaks)),
            **{f"{task}.gold_failed": float(failed_by_task[task]) for task in sorted({i.task for i in items})},
        },
        thresholds={"gold_failed": 0.0, "leaked": 0.0, "ngram": float(ngram), "similarity": similarity},
        detail="; ".join(problems)
        or f"{len(items)} items ({len(pool)} pool, {len(shadow)} shadow, {len(gate)} gate): every gold path reaches "
        f"its answer, every call succeeds; no pool page holds a held-out question or page",
    )


def find_page_leaks(
    pool: list[TaskItem], held_out: list[TaskItem], ngram: int, similarity: float, pages_by: PageModel = "titles"
) -> list[tuple[str, str, str]]:
    """(pool item id, held-out item id, why) for every pool item one of whose pages holds a held-out item's question
    or one of its own pages, in pool order (the first such page and material named)."""
    material = [(h, what, text) for h in held_out for what, text in _own_material(h, pages_by)]
    whole = {normalize(text): m for m, (_, _, text) in enumerate(material)}
    page_of = [(item, text) for item in pool for text in readable(item.context, pages_by)]
    found = most_contained(
        [normalize(text).split() for _, text in page_of],
        [normalize(text).split() for _, _, text in material],
        ngram,
        similarity,
    )
    leaks: dict[str, tuple[str, str, str]] = {}
    for (item, text), match in zip(page_of, found, strict=True):
        m = whole.get(normalize(text))
        if item.id in leaks or (m is None and match is None):
            continue
        held, what, _ = material[m if m is not None else match[0]]
        how = "equal" if m is not None else f"{ngram}-gram containment {match[1]:.2f}"
        leaks[item.id] = (item.id, held.id, f"a page {how} to its {what}")
    return list(leaks.values())


def readable(context: str, pages_by: PageModel) -> list[str]:
    """Every text `wiki` can show of `context`: its titled pages; under mentions each passage alone and the page of
    each of its names."""
    if pages_by == "titles":
        return [page.text for page in pages(context)]
    named = (mention_page(context, name) for name in dict.fromkeys(names(context)))
    return list(dict.fromkeys([*units(context), *(text for text in named if text is not None)]))


def _own_material(item: TaskItem, pages_by: PageModel = "titles") -> list[tuple[str, str]]:
    """A held-out item's question, and its pages that name a name of the question, each with what it is."""
    asked = list(dict.fromkeys(name for name in names(item.question) if normalize(name)))
    if pages_by == "mentions":
        own = [(f"page {name!r}", mention_page(item.context, name)) for name in asked]
        return [("question", item.question), *((what, text) for what, text in own if text is not None)]
    wanted = {normalize(name) for name in asked}
    own = [
        (f"page {page.title!r}", page.text)
        for page in pages(item.context)
        if any(f" {name} " in f" {normalize(page.text)} " for name in wanted)
    ]
    return [("question", item.question), *own]


def _more(found: list) -> str:
    return f" (and {len(found) - SHOWN} more)" if len(found) > SHOWN else ""


CHECK = Check(
    name="live_episodes",
    rounds=(1, 2),
    commands=("pool validate",),
    thresholds={"preflight.leak_ngram": None, "preflight.leak_similarity": None},  # their floors stand in leak's entry
    run=lambda r: (
        None
        if r.config.data.episodes != "live"
        else live_episodes_check(
            r.pool,
            r.shadow,
            r.gate,
            r.config.preflight.leak_ngram,
            r.config.preflight.leak_similarity,
            r.config.data.pages,
        )
    ),
    runbook=Runbook(
        means="with data.episodes: live, an item cannot be played through its tools (its gold path asks wiki for a "
        "title the item has no page of, a calc step fails, or the gold answer is never read: a task whose records "
        "keep no worked steps, as the real GSM8K file), or a pool item's pages hold a held-out item's question or "
        "one of its own pages",
        tries=(
            "read the ids and reasons in the detail: the failed call and what it read back, or what no page read holds",
            "a task whose records the gold path cannot read: take it out of data.mix / data.sources, or run the "
            "episodes recorded: --set data.episodes=recorded",
            "a leak: keep each task's held-out records apart from its pool records (data.sources.<task>.shadow_path / "
            "shadow_split); production may not raise preflight.leak_ngram / preflight.leak_similarity above 5 / "
            "0.85 (PRODUCTION_FLOORS), which this check shares with leak",
        ),
    ),
)
