"""The shadow eval set must have the configured size and cover every task × difficulty cell."""

from __future__ import annotations

from collections import Counter

from rc1.checks.result import CheckResult
from rc1.checks.spec import Check
from rc1.core.runbook import Runbook
from rc1.data.task import DIFFICULTIES, TaskItem


def shadow_stratification(shadow: list[TaskItem], expected_size: int, mix: dict[str, float]) -> CheckResult:
    cells = Counter((item.task, item.difficulty) for item in shadow)
    wanted = [(task, d) for task, share in sorted(mix.items()) if share > 0 for d in DIFFICULTIES]
    empty = [f"{t}/{d}" for t, d in wanted if cells[(t, d)] == 0]
    measured = {"items": float(len(shadow)), "empty_cells": float(len(empty))}
    measured.update({f"{t}/{d}": float(cells[(t, d)]) for t, d in wanted})
    passed = len(shadow) == expected_size and not empty
    detail = f"{len(shadow)} items (expected {expected_size}) over {len(wanted)} task×difficulty cells"
    if empty:
        detail += "; empty: " + ", ".join(empty)
    return CheckResult(
        name="shadow_set",
        passed=passed,
        measured=measured,
        thresholds={"items": float(expected_size), "empty_cells": 0.0},
        detail=detail,
    )


CHECK = Check(
    name="shadow_set",
    rounds=(1, 2),
    thresholds={"data.shadow_size": None},
    run=lambda r: shadow_stratification(r.shadow, r.config.data.shadow_size, r.config.data.mix),
    runbook=Runbook(
        means="a task × difficulty cell of the shadow set is empty, because a task's share of data.shadow_size is "
        "under 3 items (one per difficulty), or the file on disk was built with another data.shadow_size",
        tries=(
            "raise data.shadow_size so every task with a data.mix share gets at least 3 items (production: ≥ 245)",
            "or raise the small task's share in data.mix (local profile only: production holds the mix fixed)",
            "a size other than data.shadow_size: rebuild the held-out sets from this config in INIT with "
            "rc1 shadow materialize (or rc1 advance)",
        ),
    ),
)
