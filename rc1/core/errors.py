"""One exception hierarchy; the CLI maps each class to one exit code."""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    OK = 0
    RUNTIME_FAILURE = 1
    BAD_INPUT = 2
    GATE_CLOSED = 3
    LOG_BUSY = 4


class Rc1Error(Exception):
    """Root of every error rc1 raises on purpose. Unknown exceptions exit 1 as FATAL."""

    exit_code = ExitCode.RUNTIME_FAILURE


class BadInput(Rc1Error):
    """A config, data file or log is malformed. Exit 2; nothing is appended to the log.

    The message starts with the path (file, or file plus dotted key) it is about.
    """

    exit_code = ExitCode.BAD_INPUT


class GateClosed(Rc1Error):
    """The state machine does not allow the action, or a gate's checks failed. Exit 3."""

    exit_code = ExitCode.GATE_CLOSED


class RoundFailed(GateClosed):
    """A preflight round's checks failed (check_failed… gate_failed appended). Exit 3; the CLI prints each failed
    check's runbook entry after the message (rc1/app/runbook.py)."""

    def __init__(self, message: str, checks: list[str]):
        super().__init__(message)
        self.checks = checks


class EventRefused(GateClosed):
    """The run's rules refuse an event in its current state (rc1/run/door.py): it is not written. Exit 3."""


class Halted(GateClosed):
    """A monitor rule halted the run (state HALTED), or a command met a halted run without a way forward chosen
    (`rc1 advance --because`, `--from`, `--stop`). Exit 3; the message names the rule, the step and the ways forward."""


class LogBusy(Rc1Error):
    """Another process holds the run's writer lock. Exit 4."""

    exit_code = ExitCode.LOG_BUSY


class CorruptLog(BadInput):
    """The event log is damaged before its tail (not repairable by `rc1 repair`). Exit 2."""


class WrittenByNewerRc1(BadInput):
    """A complete line with the event envelope (seq, prev, run) whose event type or schema version this rc1 does
    not know: a newer rc1 wrote it. Never a torn tail to repair away; exit 2."""


class DiskFull(Rc1Error):
    """No room to append an event (exit 1). The writer has cut its partial line off: the log ends at its last
    whole event and a later command resumes from there."""


class TrainingError(Rc1Error):
    """Training itself failed (engine error, non-finite loss). Exit 1."""


class PushFailed(Rc1Error):
    """`rc1 export --push-to-hub` could not reach the hub, or the hub refused the token or the repo. Exit 1, one
    line; the local export and its model_exported event stand."""


class ScorerError(Rc1Error):
    """A judge could not score: it failed, or answered malformed JSON, after every retry; or it
    refused the request (401, 404). Exit 1. The message never holds the API key."""
