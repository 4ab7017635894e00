"""What the stage commands (preflight, pool, shadow, difficulty, scorer) share: the run's session opened for a
command, its checks printed, and the refusals of a missing or already gated input."""

from __future__ import annotations

import argparse
from pathlib import Path

from rc1.app.gate import require_allowed
from rc1.app.session import Session
from rc1.checks.result import CheckResult
from rc1.cli.args import config_of
from rc1.core.errors import BadInput, ExitCode


def open_session(args: argparse.Namespace) -> Session:
    return Session.open(config_of(args), accept_changed_inputs=args.accept_changed_inputs)


def print_checks(results: list[CheckResult]) -> int:
    """Each check's line; the exit code is GATE_CLOSED when any failed."""
    for r in results:
        print(f"  {'PASS' if r.passed else 'FAIL'}  {r.name:<18} {r.detail}")
    return 0 if all(r.passed for r in results) else int(ExitCode.GATE_CLOSED)


def require_built(path: Path, what: str) -> None:
    if not path.exists():
        raise BadInput(f"{path}: no {what} yet; build it first (`rc1 {what} …` or `rc1 advance`)")


def before_any_gate(session: Session, what: str) -> None:
    """A gated input is rebuilt only where round 1 may still run (INIT, or after a gate was invalidated): once a
    gate has passed on it, the machine refuses, instead of the gate silently vouching for other bytes."""
    require_allowed(session, "round1_passed", f"{what} (it rewrites a gated input)")
