"""Asking the machine, and binding gates to the fingerprints of their inputs."""

from __future__ import annotations

from rc1.app.session import Session
from rc1.checks.result import CheckResult
from rc1.config.kept import changed_files
from rc1.core.errors import GateClosed, RoundFailed
from rc1.data.fingerprints import current_fingerprints
from rc1.run import events as ev


def require_allowed(session: Session, trigger: str, action: str) -> None:
    """Refuse (exit 3, nothing appended) what the state machine does not allow now, naming the command that is."""
    machine = session.replayer.machine
    if not machine.may_trigger(trigger):
        from rc1.views.status import next_command

        why = " and the run is complete: every line of training has finished" if machine.complete else ""
        then = next_command(session.projection, session.ws.run, {})
        raise GateClosed(f"{action} is not allowed in state {machine.state}{why}; what is, now: {then}")


def ensure_inputs_unchanged(session: Session, recorded: ev.Fingerprints, gate: str) -> ev.Fingerprints:
    """Compare inputs on disk with what a gate recorded. On a change: refuse, appending nothing, unless the
    command was told to accept it (--accept-changed-inputs): then append gate_invalidated and stop."""
    current = current_fingerprints(session.ws, session.loaded)
    changed = ev.changed_inputs(recorded, current)
    if not changed:
        return current
    listed = "; ".join(f"{n}: {o[:12]} -> {c[:12]}" for n, o, c in changed)
    files = changed_files(session.ws, session.loaded) if any(n == "config" for n, _, _ in changed) else []
    if files:  # the YAML may be as it was: say which named file's content changed
        listed += f" (the content of {', '.join(files)} changed)"
    if not session.accept_changed_inputs:
        raise GateClosed(
            f"inputs changed since {gate} passed ({listed}); nothing was appended. Put them back as they were, or "
            "run again with --accept-changed-inputs to invalidate the gate and re-run the preflight rounds on them"
        )
    name, old, new = changed[0]
    session.append(session.run.invalidate_gate(name, old, new))
    raise GateClosed(
        f"inputs changed since {gate} passed ({listed}); the gate is invalidated and the run is back to INIT: "
        "run `rc1 advance` (with the same --config and --set) to re-run the preflight rounds on the new inputs"
    )


def record_checks(
    session: Session,
    round_no: int,
    results: list[CheckResult],
    fingerprints: ev.Fingerprints,
    scoring: ev.ScoringSummary,
) -> None:
    """Append one event per check, then the round's verdict, which the run decides from those events (with the
    round's judge calls' summary); a failed round raises RoundFailed (exit 3)."""
    _append_checks(session, round_no, results)
    verdict = session.append(session.run.conclude_round(round_no, [r.name for r in results], fingerprints, scoring))
    if isinstance(verdict, ev.GateFailed):
        details = "\n".join(f"  - {r.name}: {r.detail}" for r in results if not r.passed)
        raise RoundFailed(
            f"round {round_no} failed {len(verdict.failures)} of {len(results)} checks:\n{details}", verdict.failures
        )


ADHOC_ROUND = 0  # checks run by hand (`rc1 pool validate`) outside any round; they open no gate


def record_checks_adhoc(session: Session, results: list[CheckResult]) -> None:
    _append_checks(session, ADHOC_ROUND, results)


def _append_checks(session: Session, round_no: int, results: list[CheckResult]) -> None:
    for result in results:
        session.append(
            session.run.record_check(
                round_no, result.name, result.passed, result.measured, result.thresholds, result.detail, result.tags
            )
        )
