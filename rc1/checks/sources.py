"""Data sources: every slot of a task with an official-format file (`data.sources`) holds a distinct
record of that file, in the pool and (with `shadow_path`) in the shadow set. A source too small for its
share fails round 1 here, naming how many records are missing, instead of stopping the pool build."""

from __future__ import annotations

from rc1.checks.result import CheckResult
from rc1.data.source_ref import SourceRef
from rc1.data.sources import Missing
from rc1.data.task import TaskItem

NAME = "data_sources"


def data_sources_check(pool: list[TaskItem], shadow: list[TaskItem], pool_refs: dict[str, SourceRef],
                       shadow_refs: dict[str, SourceRef]) -> CheckResult:
    measured: dict[str, float] = {}
    problems, found = [], []
    for stream, items, refs in (("pool", pool, pool_refs), ("shadow", shadow, shadow_refs)):
        for task, ref in sorted(refs.items()):
            mine = [item for item in items if item.task == task]
            drawn = [item for item in mine if item.source == ref.label]
            distinct = len({item.id for item in drawn})
            measured[f"{stream}.{task}.from_source"] = float(distinct)
            measured[f"{stream}.{task}.slots"] = float(len(mine))
            found.append(f"{stream} {task}: {distinct} of {len(mine)} from {ref.name}")
            if distinct != len(mine):
                problems.append(f"{stream} {task}: {len(mine) - distinct} of {len(mine)} items are not distinct records of {ref.label}")
    if not found:
        return CheckResult(name=NAME, passed=True, measured={}, thresholds={},
                           detail="no data.sources: every task from its built-in generator")
    return CheckResult(name=NAME, passed=not problems, measured=measured, thresholds={},
                       detail="; ".join(problems or found))


def shortfall_check(missing: list[Missing]) -> CheckResult:
    """The failing check of a round whose sources could not fill their slots."""
    return CheckResult(
        name=NAME, passed=False,
        measured={f"{m.task}{'/' + m.difficulty if m.difficulty else ''}.missing": float(m.count) for m in missing},
        thresholds={f"{m.task}{'/' + m.difficulty if m.difficulty else ''}.needed": float(m.needed) for m in missing},
        detail="; ".join(m.text() for m in missing),
    )
