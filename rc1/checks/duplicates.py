"""Duplicate rate: exact duplicates after normalization, plus near-duplicates found by MinHash-LSH.

An item counts once if it duplicates any earlier item, exactly (equal normalized text) or nearly
(Jaccard of word 5-gram shingles >= `near_similarity`). Near-duplicates are found without comparing
all pairs: 32 MinHash values per item, cut into 8 bands of 4; items that agree on a whole band
become candidates, and a candidate pair counts only once its exact Jaccard is computed and clears
the bar. With those bands a pair at Jaccard 0.85 becomes a candidate with probability 0.997.

The text compared is the item's context and question: the prompt minus the framing every built-in
prompt shares ("Context:", "Question:", the instruction), which would only add identical shingles.

The rate is reported overall and per task (a duplicate counts against the task of the later
item); the check fails when either is above `max_rate`.

Shingles are keyed by `rc1.data.text.ngram_keys` and hashed by a fixed multiply-shift family, never
by Python's `hash` (salted per process), so the rate is the same in every process.
"""

from __future__ import annotations

import random
from collections import Counter

import numpy as np

from rc1.checks.result import CheckResult
from rc1.checks.spec import Check, Floor
from rc1.core.runbook import Runbook
from rc1.data.task import TaskItem
from rc1.data.text import ngram_keys, normalize

SHINGLE_WORDS = 5
BANDS, ROWS = 8, 4
# A bucket shared by very many items (a degenerate pool) is only looked at through its newest
# members, and candidates are ranked by their MinHash estimate before any exact Jaccard is computed:
# together these keep the work per item bounded whatever the pool looks like.
BUCKET_PEEK = 256
ESTIMATE_SLACK = 0.2  # 3 standard errors of a 32-value MinHash estimate near 0.85

# Python's Mersenne Twister is stable across versions and platforms; these constants never change.
_PARAMS = np.array(
    [[random.Random(f"minhash|{row}|{k}").getrandbits(64) for k in range(BANDS * ROWS)] for row in range(3)],
    dtype=np.uint64,
)
_MUL = _PARAMS[0] | np.uint64(1)  # multiply-shift needs odd multipliers
_ADD = _PARAMS[1]
_BAND_MIX = _PARAMS[2, :ROWS] | np.uint64(1)


def duplicate_rate(items: list[TaskItem], max_rate: float, near_similarity: float) -> CheckResult:
    texts = [normalize(f"{item.context} {item.question}") for item in items]
    first_seen: dict[str, int] = {}
    exact: list[tuple[int, int]] = []
    distinct: list[int] = []
    for i, text in enumerate(texts):
        if text in first_seen:
            exact.append((i, first_seen[text]))
        else:
            first_seen[text] = i
            distinct.append(i)
    near = [(distinct[j], distinct[k]) for j, k in _near_duplicates([texts[i] for i in distinct], near_similarity)]
    n = len(items)
    rate = (len(exact) + len(near)) / n if n else 0.0
    measured = {"rate": rate, "exact": float(len(exact)), "near": float(len(near)), "items": float(n)}
    # A duplicate counts against the task of the later item (the one that repeats).
    per_task_n = Counter(item.task for item in items)
    per_task_dup = Counter(items[i].task for i, _ in exact + near)
    for task in sorted(per_task_n):
        measured[f"{task}.rate"] = per_task_dup[task] / per_task_n[task]
    high = [task for task in sorted(per_task_n) if measured[f"{task}.rate"] > max_rate]
    examples = ", ".join(f"{items[i].id}~{items[k].id}" for i, k in (exact + near)[:3])
    detail = f"{len(exact)} exact and {len(near)} near duplicates among {n} items (rate {rate:.4f})"
    if high:
        detail += "; above the limit in " + ", ".join(f"{task} {measured[f'{task}.rate']:.4f}" for task in high)
    if examples:
        detail += f"; e.g. {examples}"
    return CheckResult(
        name="duplicates",
        passed=n > 0 and rate <= max_rate and not high,
        measured=measured,
        thresholds={"max_rate": max_rate, "near_similarity": near_similarity},
        detail=detail if n else "no items to measure",
    )


def _near_duplicates(texts: list[str], threshold: float) -> list[tuple[int, int]]:
    """(later, earlier) for every text that is a near-duplicate of some earlier text."""
    if not texts:
        return []
    # A text shorter than a shingle is padded so that it still has one (its whole self).
    words = [t.split() for t in texts]
    words = [w if len(w) >= SHINGLE_WORDS else w + ["\0"] * (SHINGLE_WORDS - len(w)) for w in words]
    keys, owner = ngram_keys(words, SHINGLE_WORDS)
    starts = np.searchsorted(owner, np.arange(len(texts)))
    ends = np.append(starts[1:], len(keys))
    signatures = _minhash(keys, starts)
    bands = _band_keys(signatures)
    shingle_sets: dict[int, set[int]] = {}

    def shingles(i: int) -> set[int]:
        if i not in shingle_sets:
            shingle_sets[i] = set(keys[starts[i] : ends[i]].tolist())
        return shingle_sets[i]

    buckets: list[dict[int, list[int]]] = [{} for _ in range(BANDS)]
    found = []
    for j in range(len(texts)):
        candidates: set[int] = set()
        for band in range(BANDS):
            members = buckets[band].setdefault(bands[band][j], [])
            candidates.update(members[-BUCKET_PEEK:])
            members.append(j)
        match = _confirm(j, candidates, shingles, signatures, threshold)
        if match is not None:
            found.append((j, match))
    return found


def jaccard(a: set, b: set) -> float:
    union = len(a | b)
    return len(a & b) / union if union else 1.0


def _confirm(j: int, candidates: set[int], shingles, signatures: np.ndarray, threshold: float) -> int | None:
    """The most similar earlier candidate whose exact Jaccard clears `threshold`, else None."""
    if not candidates:
        return None
    ids = np.fromiter(sorted(candidates), dtype=np.int64, count=len(candidates))
    estimates = (signatures[ids] == signatures[j]).mean(axis=1)
    for k in np.argsort(-estimates, kind="stable"):
        if estimates[k] < threshold - ESTIMATE_SLACK:
            break
        if jaccard(shingles(j), shingles(int(ids[k]))) >= threshold:
            return int(ids[k])
    return None


def _minhash(keys: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """(texts, 32) MinHash signatures of all texts at once, one multiply-shift hash function at a time."""
    signatures = np.empty((len(starts), BANDS * ROWS), dtype=np.uint64)
    for k in range(BANDS * ROWS):
        hashed = (keys * _MUL[k] + _ADD[k]) >> np.uint64(32)  # uint64 arithmetic wraps, as intended
        signatures[:, k] = np.minimum.reduceat(hashed, starts)
    return signatures


def _band_keys(signatures: np.ndarray) -> list[list[int]]:
    """One 64-bit key per text and band; a key collision only adds a candidate, which is then checked."""
    keys = []
    for band in range(BANDS):
        rows = signatures[:, band * ROWS : (band + 1) * ROWS]
        keys.append((rows * _BAND_MIX).sum(axis=1, dtype=np.uint64).tolist())
    return keys


CHECK = Check(
    name="duplicates",
    rounds=(1, 2),
    commands=("pool validate",),
    thresholds={
        "preflight.max_duplicate_rate": Floor("max", 0.02),
        "preflight.near_duplicate_similarity": Floor("max", 0.85),
    },
    run=lambda r: duplicate_rate(
        r.pool, r.config.preflight.max_duplicate_rate, r.config.preflight.near_duplicate_similarity
    ),
    runbook=Runbook(
        means="a generator or a records file repeats the same (or a near-identical) context and question more often "
        "than preflight.max_duplicate_rate allows, overall or in one task",
        tries=(
            "read the examples in the detail (later~earlier ids) to see which task, template or source repeats",
            "use more varied records for that task (data.sources.<task>, data.tasks.<name>), or ask for fewer "
            "items: data.pool_size or its data.mix share (production: ≥ 30000 items, the mix fixed)",
            "production may not raise preflight.max_duplicate_rate above 0.02 nor "
            "preflight.near_duplicate_similarity above 0.85 (PRODUCTION_FLOORS)",
        ),
    ),
)
