"""The shadow eval set must have the configured size and cover every task × difficulty cell."""

from __future__ import annotations

from collections import Counter

from rc1.checks.result import CheckResult
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
        name="shadow_set", passed=passed, measured=measured,
        thresholds={"items": float(expected_size), "empty_cells": 0.0}, detail=detail,
    )
