"""Asking the machine, and binding gates to the fingerprints of their inputs."""

from __future__ import annotations

from rc1.checks.result import CheckResult
from rc1.errors import GateClosed
from rc1.events import schema as ev
from rc1.fingerprints import current_fingerprints
from rc1.session import Session


def require_allowed(session: Session, trigger: str, action: str) -> None:
    machine = session.replayer.machine
    if not machine.may_trigger(trigger):
        allowed = ", ".join(machine.allowed()) or "nothing"
        why = " and the run is complete: every line of training has finished" if machine.complete else ""
        raise GateClosed(f"{action} is not allowed in state {machine.state}{why} (allowed now: {allowed})")


def ensure_inputs_unchanged(session: Session, recorded: ev.Fingerprints, gate: str) -> ev.Fingerprints:
    """Compare inputs on disk with what a gate recorded; on any change append gate_invalidated and refuse."""
    current = current_fingerprints(session.ws, session.loaded)
    changed = ev.changed_inputs(recorded, current)
    if changed:
        name, old, new = changed[0]
        session.append(session.run.invalidate_gate(name, old, new))
        listed = "; ".join(f"{n}: {o[:12]} -> {c[:12]}" for n, o, c in changed)
        raise GateClosed(
            f"inputs changed since {gate} passed ({listed}); the gate is invalidated and the run is back to INIT: "
            "run `rc1 advance` to re-run the preflight rounds on the new inputs"
        )
    return current


def record_checks(session: Session, round_no: int, results: list[CheckResult], fingerprints: ev.Fingerprints,
                  scoring: ev.ScoringSummary) -> None:
    """Append one event per check, then the round's verdict (with its judge calls' summary); a failed
    round raises GateClosed (exit 3)."""
    _append_checks(session, round_no, results)
    failures = [r.name for r in results if not r.passed]
    if failures:
        session.append(session.run.fail_round(round_no, failures, scoring))
        details = "\n".join(f"  - {r.name}: {r.detail}" for r in results if not r.passed)
        raise GateClosed(f"round {round_no} failed {len(failures)} of {len(results)} checks:\n{details}")
    session.append(session.run.pass_round(round_no, fingerprints, [r.name for r in results], scoring))


ADHOC_ROUND = 0  # checks run by hand (`rc1 pool validate`) outside any round; they open no gate


def record_checks_adhoc(session: Session, results: list[CheckResult]) -> None:
    _append_checks(session, ADHOC_ROUND, results)


def _append_checks(session: Session, round_no: int, results: list[CheckResult]) -> None:
    for result in results:
        event_cls = ev.CheckPassed if result.passed else ev.CheckFailed
        session.append(
            event_cls(round=round_no, name=result.name, measured=result.measured, thresholds=result.thresholds,
                      detail=result.detail, tags=list(result.tags))
        )
