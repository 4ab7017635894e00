"""The gate set is fit to decide the release: `release.gate_size` hard items of `release.tasks`, apart from the
shadow set (which chooses the checkpoint it then measures) and from the pool (which training sees).

Apart means the pool's own `leak` test (rc1/checks/leak.py) finds nothing, both ways it is asked here: no gate
item leaks from the shadow set, and no pool item leaks from the gate set; ids are disjoint too.
"""

from __future__ import annotations

from collections import Counter

from rc1.checks.leak import find_leaks
from rc1.checks.result import CheckResult
from rc1.checks.spec import Check
from rc1.core.runbook import Runbook
from rc1.data.task import TaskItem


def gate_set_check(
    gate: list[TaskItem],
    shadow: list[TaskItem],
    pool: list[TaskItem],
    *,
    size: int,
    tasks: list[str],
    ngram: int,
    similarity: float,
) -> CheckResult:
    shadow_ids, pool_ids = {item.id for item in shadow}, {item.id for item in pool}
    in_shadow = {g for g, _, _ in find_leaks(gate, shadow, ngram, similarity)}
    in_shadow |= {item.id for item in gate if item.id in shadow_ids}
    pool_leaks = find_leaks(pool, gate, ngram, similarity)
    pool_leaked = {p for p, _, _ in pool_leaks} | {item.id for item in gate if item.id in pool_ids}
    not_hard = sum(item.difficulty != "hard" for item in gate)
    off_task = sum(item.task not in tasks for item in gate)
    per_task = Counter(item.task for item in gate)
    problems = []
    if len(gate) != size:
        problems.append(f"{len(gate)} items, release.gate_size is {size}")
    if not_hard or off_task:
        problems.append(f"{not_hard} items not hard and {off_task} not of release.tasks ({', '.join(tasks)})")
    if in_shadow:
        problems.append(f"{len(in_shadow)} gate items are (nearly) shadow items: {', '.join(sorted(in_shadow)[:5])}")
    if pool_leaked:
        shown = "; ".join(f"{p} ~ {g} ({why})" for p, g, why in pool_leaks[:5])
        problems.append(f"{len(pool_leaked)} pool items leak from the gate set" + (f": {shown}" if shown else ""))
    return CheckResult(
        name="gate_set",
        passed=not problems,
        measured={
            "items": float(len(gate)),
            "not_hard": float(not_hard),
            "off_task": float(off_task),
            "in_shadow": float(len(in_shadow)),
            "pool_leaked": float(len(pool_leaked)),
            **{f"{task}.items": float(count) for task, count in sorted(per_task.items())},
        },
        thresholds={
            "items": float(size),
            "in_shadow": 0.0,
            "pool_leaked": 0.0,
            "ngram": float(ngram),
            "similarity": similarity,
        },
        detail="; ".join(problems)
        if problems
        else f"{len(gate)} hard items of {', '.join(tasks)} "
        f"({', '.join(f'{t} {n}' for t, n in sorted(per_task.items()))}); "
        f"none in the {len(shadow)}-item shadow set, no pool item leaks from them",
    )


CHECK = Check(
    name="gate_set",
    rounds=(1, 2),
    thresholds={"release.gate_size": None},
    run=lambda r: gate_set_check(
        r.gate,
        r.shadow,
        r.pool,
        size=r.config.release.gate_size,
        tasks=list(r.config.release.tasks),
        ngram=r.config.preflight.leak_ngram,
        similarity=r.config.preflight.leak_similarity,
    ),
    runbook=Runbook(
        means="the gate set is not apart from the shadow set and the pool (gate items nearly repeat shadow items, or "
        "pool items gate items), usually overlapping or near-copied records, or it is not release.gate_size "
        "hard items of release.tasks",
        tries=(
            "keep a task's held-out records apart from its pool records: data.sources.<task>.shadow_path / "
            "shadow_split disjoint from path / split, and no near-copies in a file of data.tasks.<name>",
            "a wrong size, or items not hard or not of release.tasks: the gate file was built with another config; "
            "rebuild it in INIT with rc1 shadow materialize (or rc1 advance)",
            "production may not raise preflight.leak_ngram / preflight.leak_similarity above 5 / 0.85 "
            "(PRODUCTION_FLOORS), which this check shares with leak",
        ),
    ),
)
