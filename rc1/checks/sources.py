"""Data sources: every slot of a task with an official-format file (`data.sources`) holds a distinct
record of that file, in the pool and (with `shadow_path`) in the shadow set. A source too small for its
share fails round 1 here, naming how many records are missing, instead of stopping the pool build."""

from __future__ import annotations

from rc1.checks.result import CheckResult
from rc1.checks.spec import Check
from rc1.core.runbook import Runbook
from rc1.data.source_ref import SourceRef
from rc1.data.sources import Missing, measuring, pool_sources, shadow_sources
from rc1.data.task import TaskItem

NAME = "data_sources"


def data_sources_check(
    pool: list[TaskItem], shadow: list[TaskItem], pool_refs: dict[str, SourceRef], shadow_refs: dict[str, SourceRef]
) -> CheckResult:
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
                problems.append(
                    f"{stream} {task}: {len(mine) - distinct} of {len(mine)} items are not distinct records of "
                    f"{ref.label}"
                )
    if not found:
        return CheckResult(
            name=NAME,
            passed=True,
            measured={},
            thresholds={},
            detail="no data.sources: every task from its built-in generator",
        )
    return CheckResult(
        name=NAME, passed=not problems, measured=measured, thresholds={}, detail="; ".join(problems or found)
    )


def shortfall_check(missing: list[Missing]) -> CheckResult:
    """The failing check of a round whose sources could not fill their slots."""
    return CheckResult(
        name=NAME,
        passed=False,
        measured={f"{m.task}{'/' + m.difficulty if m.difficulty else ''}.missing": float(m.count) for m in missing},
        thresholds={f"{m.task}{'/' + m.difficulty if m.difficulty else ''}.needed": float(m.needed) for m in missing},
        detail="; ".join(m.text() for m in missing),
    )


CHECK = Check(
    name=NAME,
    rounds=(1, 2),
    run=lambda r: data_sources_check(
        r.pool,
        r.shadow,
        pool_sources(r.config.data, r.loaded.resolve, measuring(r.loaded, r.ws)),
        shadow_sources(r.config.data, r.loaded.resolve, measuring(r.loaded, r.ws)),
    ),
    runbook=Runbook(
        means="a task's records (data.sources or data.tasks) hold fewer distinct questions than its slots in the pool "
        "or the held-out sets need, so slots cannot each get a record of their own",
        tries=(
            "give the task more distinct records (equal questions after normalizing count once): a bigger file or "
            "split in data.sources.<task>.path / hub / split, or in data.tasks.<name>.path / hub",
            "a held-out cell short (the detail names task/difficulty): point data.sources.<task>.shadow_path / "
            "shadow_split at more records, or raise data.tasks.<name>.held_out_share",
            "ask for fewer slots: data.pool_size, the task's data.mix share, data.shadow_size or release.gate_size "
            "(production holds data.pool_size ≥ 30000, data.shadow_size ≥ 245 and the mix fixed)",
            "in round 2, items no longer from their source mean the file (or the working directory) moved since "
            "round 1: put it back where round 1 read it",
        ),
    ),
)
