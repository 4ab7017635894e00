"""What every preflight check returns; the rounds turn each into a check_passed/check_failed event."""

from __future__ import annotations

import msgspec


class CheckResult(msgspec.Struct, frozen=True, kw_only=True):
    name: str  # e.g. "distinct2", "leak", "duplicates"
    passed: bool  # computed from measured vs thresholds, never a literal
    measured: dict[str, float]  # e.g. {"overall": 0.71, "gsm8k": 0.66}
    thresholds: dict[str, float]  # e.g. {"min": 0.60}
    detail: str = ""  # one human sentence: why it failed / what was measured
    tags: list[str] = msgspec.field(default_factory=list)  # e.g. ["pre_run_check"]
