"""The runbook, whole: every preflight check's entry (the checks table, rc1/app/checks.py) and every monitor rule's
(rc1/run/monitors/rules/), each standing beside its code. A failed round prints its failed checks' entries, a tripped
rule its own, `rc1 status` a halt's, `rc1 runbook` any of them, and the runbook of docs/monitors-and-runbook.md is
`rc1 runbook --markdown` (tests/unit/test_runbook.py holds the two equal and every check a round can record to an
entry)."""

from __future__ import annotations

from rc1.app.checks import CHECKS as CHECK_TABLE
from rc1.core.runbook import Runbook
from rc1.run.monitors.rules import MONITORS

CHECKS: dict[str, Runbook] = {check.name: check.runbook for check in CHECK_TABLE}
RULES: dict[str, Runbook] = {name: spec.runbook for name, spec in MONITORS.items()}


def entry(name: str) -> Runbook | None:
    return CHECKS.get(name) or RULES.get(name)


def text(names: list[str]) -> str:
    """The entries of `names` (checks or rules), each under its name."""
    return "\n".join(f"{name}:\n{entry(name).text('    ')}" for name in names if entry(name) is not None)


def markdown() -> str:
    """The runbook of docs/monitors-and-runbook.md: a table per kind, what a failure usually means and what to try."""
    lines = ["| check | usually | try |", "|---|---|---|"]
    lines += [_row(name, book) for name, book in CHECKS.items()]
    lines += ["", "| monitor | usually | try |", "|---|---|---|"]
    lines += [_row(name, book) for name, book in RULES.items()]
    return "\n".join(lines) + "\n"


def _row(name: str, book: Runbook) -> str:
    tries = "<br>".join(_cell(t) for t in book.tries)
    return f"| `{name}` | {_cell(book.means)} | {tries} |"


def _cell(value: str) -> str:
    return value.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")
