"""Every monitor rule, one module each, collected here by explicit imports (nothing scans the package). Adding a
rule is one module (its thresholds, its `read`, the signals it reads and how many recent steps it needs, its runbook)
and one line here; its config section, its event record, what the fold keeps for it, `rc1 config explain monitors`,
`rc1 ls monitors` and the runbook of docs/monitors-and-runbook.md follow from the table."""

from __future__ import annotations

from rc1.run.monitors.rules import (
    budget,
    drift,
    entropy_floor,
    frozen_base,
    never_asking,
    no_signal,
    non_finite,
    over_asking,
    plateau,
    reward_hacking,
    sampler_mismatch,
    shadow_regression,
    tool_failures,
    tool_hops_drift,
    truncation,
)
from rc1.run.monitors.spec import MonitorSpec

MONITORS: dict[str, MonitorSpec] = {
    spec.name: spec
    for spec in (
        non_finite.SPEC,
        frozen_base.SPEC,
        entropy_floor.SPEC,
        truncation.SPEC,
        no_signal.SPEC,
        tool_failures.SPEC,
        tool_hops_drift.SPEC,
        over_asking.SPEC,
        never_asking.SPEC,
        drift.SPEC,
        sampler_mismatch.SPEC,
        shadow_regression.SPEC,
        reward_hacking.SPEC,
        plateau.SPEC,
        budget.SPEC,
    )
}

# The rules the config can set (the non-finite and frozen-base guards cannot be switched off).
CONFIGURABLE: dict[str, MonitorSpec] = {name: spec for name, spec in MONITORS.items() if spec.params is not None}
NON_FINITE = non_finite.SPEC.name
FROZEN_BASE = frozen_base.SPEC.name
