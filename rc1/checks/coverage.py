"""Framing coverage: every task's episodes use at least `min_roles` roles and `min_styles` styles."""

from __future__ import annotations

from rc1.checks.result import CheckResult
from rc1.checks.spec import Check, Floor
from rc1.core.runbook import Runbook
from rc1.data.task import TaskItem


def framing_coverage(items: list[TaskItem], min_roles: int, min_styles: int) -> CheckResult:
    tasks = sorted({item.task for item in items})
    measured: dict[str, float] = {}
    short = []
    for scope in (*tasks, "overall"):
        chosen = items if scope == "overall" else [i for i in items if i.task == scope]
        roles = {i.role for i in chosen if i.role}
        styles = {i.style for i in chosen if i.style}
        templates = {i.template for i in chosen if i.template}
        measured.update(
            {
                f"{scope}.roles": float(len(roles)),
                f"{scope}.styles": float(len(styles)),
                f"{scope}.templates": float(len(templates)),
            }
        )
        if len(roles) < min_roles:
            short.append(f"{scope} uses {len(roles)} roles (need {min_roles})")
        if len(styles) < min_styles:
            short.append(f"{scope} uses {len(styles)} styles (need {min_styles})")
    detail = (
        "no items to measure"
        if not items
        else "; ".join(short)
        if short
        else f"every task uses at least {min_roles} roles and {min_styles} styles"
    )
    return CheckResult(
        name="framing_coverage",
        passed=bool(items) and not short,
        measured=measured,
        thresholds={"min_roles": float(min_roles), "min_styles": float(min_styles)},
        detail=detail,
    )


CHECK = Check(
    name="framing_coverage",
    rounds=(1, 2),
    commands=("pool validate",),
    thresholds={"preflight.min_roles": Floor("min", 4), "preflight.min_styles": Floor("min", 3)},
    run=lambda r: framing_coverage(r.pool, r.config.preflight.min_roles, r.config.preflight.min_styles),
    runbook=Runbook(
        means="a task's episodes use fewer distinct roles or styles than preflight.min_roles / preflight.min_styles: "
        "the template pack has too few, or the task has too few items for the draw to reach them all",
        tries=(
            "add roles (roles.yaml) or styles (styles.yaml) to the template pack data.templates names",
            "give the task more items: raise data.pool_size, or its data.mix share (local profile only: production "
            "holds the mix fixed)",
            "production may not go below 4 roles and 3 styles (PRODUCTION_FLOORS); lower preflight.min_roles / "
            "preflight.min_styles only on the local profile",
        ),
    ),
)
