"""Leak check: no pool item may be (nearly) a shadow item, or training would see the held-out set.

A pool item leaks when its normalized question equals a shadow item's, or when it shares word
n-grams (over normalized question + context) with a shadow item and their containment — shared
n-grams / n-grams of the smaller of the two — reaches `similarity`. Containment rather than Jaccard,
so a shadow item copied into a longer pool item (or a pool item cut from a longer shadow item)
still counts.

Near-linear, exact: shadow n-grams are indexed in a dict, and each direction of the containment
test is a prefix filter. If |P ∩ S| >= t·|P|, any |P| - ceil(t·|P|) + 1 of P's n-grams include one
of S's, so probing P's rarest n-grams that many finds S; symmetrically each shadow item indexes its
own |S| - ceil(t·|S|) + 1 rarest n-grams, and probing them with all of P's finds every S that P
nearly contains. Only the items those probes turn up are compared in full.
"""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np

from rc1.checks.result import CheckResult
from rc1.checks.spec import Check, Floor
from rc1.core.runbook import Runbook
from rc1.data.task import TaskItem
from rc1.data.text import ngram_keys, normalize


def leak_check(pool: list[TaskItem], shadow: list[TaskItem], ngram: int, similarity: float) -> CheckResult:
    leaks = find_leaks(pool, shadow, ngram, similarity)
    task_of = {item.id: item.task for item in pool}
    leaked_by_task = {task: 0 for task in sorted({item.task for item in pool})}
    for pool_id, _, _ in leaks:
        leaked_by_task[task_of[pool_id]] += 1
    shown = "; ".join(f"{p} ~ {s} ({why})" for p, s, why in leaks[:5])
    detail = f"{len(leaks)} of {len(pool)} pool items leak from the {len(shadow)}-item shadow set"
    return CheckResult(
        name="leak",
        passed=not leaks,
        measured={
            "leaked": float(len(leaks)),
            "checked": float(len(pool)),
            **{f"{task}.leaked": float(count) for task, count in leaked_by_task.items()},
        },
        thresholds={"max_leaked": 0.0, "ngram": float(ngram), "similarity": similarity},
        detail=detail + (f": {shown}" if shown else ""),
    )


def find_leaks(
    pool: list[TaskItem], shadow: list[TaskItem], ngram: int, similarity: float
) -> list[tuple[str, str, str]]:
    """(pool item id, shadow item id, why) for every pool item that leaks, in pool order."""
    found = most_contained(
        [normalize(f"{item.question} {item.context}").split() for item in pool],
        [normalize(f"{item.question} {item.context}").split() for item in shadow],
        ngram,
        similarity,
    )
    shadow_questions = {normalize(item.question): s for s, item in enumerate(shadow)}
    leaks: list[tuple[str, str, str]] = []
    for item, match in zip(pool, found, strict=True):
        s = shadow_questions.get(normalize(item.question))
        if s is not None:
            leaks.append((item.id, shadow[s].id, "same question"))
        elif match is not None:
            s, value = match
            leaks.append((item.id, shadow[s].id, f"{ngram}-gram containment {value:.2f}"))
    return leaks


def most_contained(
    texts: list[list[str]], shadow_texts: list[list[str]], ngram: int, similarity: float
) -> list[tuple[int, float] | None]:
    """For each text (its normalized words), the shadow text of highest containment with it, and that containment,
    where it reaches `similarity`; else None. A text shorter than `ngram` words has no n-gram and matches nothing
    (compare such texts whole, as `find_leaks` compares questions)."""
    keys, owner = ngram_keys(texts + shadow_texts, ngram)
    starts = np.searchsorted(owner, np.arange(len(texts) + len(shadow_texts) + 1))
    grams = [set(keys[starts[i] : starts[i + 1]].tolist()) for i in range(len(texts) + len(shadow_texts))]
    own_grams, shadow_grams = grams[: len(texts)], grams[len(texts) :]

    index: dict[int, list[int]] = defaultdict(list)  # n-gram -> shadow texts holding it
    for s, held in enumerate(shadow_grams):
        for gram in held:
            index[gram].append(s)
    rarity = {gram: len(holders) for gram, holders in index.items()}
    prefix_index: dict[int, list[int]] = defaultdict(list)  # n-gram -> shadow texts whose prefix holds it
    for s, held in enumerate(shadow_grams):
        for gram in sorted(held, key=lambda g: (rarity[g], g))[: _prefix(len(held), similarity)]:
            prefix_index[gram].append(s)
    return [_most_contained(held, shadow_grams, index, prefix_index, rarity, similarity) for held in own_grams]


def _prefix(size: int, similarity: float) -> int:
    """How many n-grams of a set of `size` must be probed so that a match at `similarity` cannot hide."""
    needed = max(1, math.ceil(similarity * size - 1e-9))
    return size - needed + 1


def _most_contained(held, shadow_grams, index, prefix_index, rarity, similarity) -> tuple[int, float] | None:
    """The shadow item with the highest containment against `held`, if it reaches `similarity`."""
    present = [gram for gram in held if gram in rarity]
    if not present:
        return None
    candidates: set[int] = set()
    # Probe 1: the pool item's rarest n-grams (those absent from the shadow set come first).
    probes = _prefix(len(held), similarity) - (len(held) - len(present))
    if probes > 0:
        for gram in sorted(present, key=lambda g: (rarity[g], g))[:probes]:
            candidates.update(index[gram])
    # Probe 2: the shadow items' prefixes, with all of the pool item's n-grams.
    for gram in present:
        candidates.update(prefix_index.get(gram, ()))
    best = None
    for s in sorted(candidates):
        shared = len(held & shadow_grams[s])
        value = shared / min(len(held), len(shadow_grams[s]))
        if shared and value >= similarity and (best is None or value > best[1]):
            best = (s, value)
    return best


CHECK = Check(
    name="leak",
    rounds=(1, 2),
    commands=("pool validate",),
    thresholds={"preflight.leak_ngram": Floor("max", 5), "preflight.leak_similarity": Floor("max", 0.85)},
    run=lambda r: leak_check(r.pool, r.shadow, r.config.preflight.leak_ngram, r.config.preflight.leak_similarity),
    runbook=Runbook(
        means="pool items equal or nearly contain shadow items: a task's pool and held-out records overlap (the same "
        "file or split for both, or near-copies in one file), or a generator repeats questions across streams",
        tries=(
            "give held-out records of their own: data.sources.<task>.shadow_path / shadow_split disjoint from "
            "path / split (e.g. train against test); the detail names the pool~shadow ids",
            "a task of yours splits its records by normalized question (data.tasks.<name>.held_out_share), so a "
            "near-copy can land on both sides: remove near-duplicate records from its file",
            "do not loosen preflight.leak_ngram / preflight.leak_similarity to pass: production may not raise them "
            "above 5 / 0.85 (PRODUCTION_FLOORS), and a leak makes the shadow numbers meaningless",
        ),
    ),
)
