"""Projections of the log onto files people read: logs/train.log, reports/metrics.jsonl,
reports/ckpt_manifest.jsonl, reports/preflight/round{1,2}*.json.

They are views: rebuilt from the log when a writing session opens or by `rc1 report`,
then kept up to date after each append. No decision is ever taken by reading them.
"""

from __future__ import annotations

import os
from pathlib import Path

import msgspec
import structlog

from rc1.events import schema as ev
from rc1.fsutil import atomic_write_bytes
from rc1.workspace import Workspace

_ENCODER = msgspec.json.Encoder()


def metrics_line(event: ev.TrainStep) -> bytes:
    record = msgspec.structs.asdict(event)
    for key in ("v", "prev", "type"):
        record.pop(key, None)
    return _ENCODER.encode(record) + b"\n"


def manifest_line(event: ev.CheckpointSaved) -> bytes:
    record = {"seq": event.seq, "ts": event.ts, "step": event.step, "dir": event.dir, "files": event.files}
    return _ENCODER.encode(record) + b"\n"


def log_line(event: ev.Event) -> str:
    """One key=value line per event, rendered by structlog."""
    payload = {k: v for k, v in msgspec.structs.asdict(event).items() if k not in ("seq", "ts", "run", "v", "prev")}
    renderer = structlog.processors.KeyValueRenderer(key_order=["ts", "seq", "event"], drop_missing=True)
    return renderer(None, "", {"ts": event.ts, "seq": event.seq, "event": ev.event_type(event), **_flatten(payload)})


def _flatten(payload: dict) -> dict:
    flat = {}
    for key, value in payload.items():
        if isinstance(value, (dict, list)) or isinstance(value, msgspec.Struct):
            flat[key] = _ENCODER.encode(value).decode()
        else:
            flat[key] = value
    return flat


def round_report(round_no: int, events: list[ev.Event]) -> dict | None:
    """The latest attempt at a round: its checks and its outcome (passed fingerprints or failures)."""
    attempt: list[ev.Event] = []
    outcome: ev.Event | None = None
    for event in events:
        if isinstance(event, (ev.CheckPassed, ev.CheckFailed)) and event.round == round_no:
            if outcome is not None:
                attempt, outcome = [], None
            attempt.append(event)
        elif isinstance(event, (ev.Round1Passed, ev.Round2Passed)) and _round_of(event) == round_no:
            outcome = event
        elif isinstance(event, ev.GateFailed) and event.round == round_no:
            outcome = event
    if not attempt:
        return None
    checks = [
        {"seq": e.seq, "name": e.name, "passed": isinstance(e, ev.CheckPassed), "measured": e.measured,
         "thresholds": e.thresholds, "detail": e.detail}
        for e in attempt
    ]
    report = {
        "round": round_no,
        "passed": isinstance(outcome, (ev.Round1Passed, ev.Round2Passed)),
        "decided_at_seq": outcome.seq if outcome else None,
        "checks": checks,
        "note": "a view of the event log; editing it opens nothing",
    }
    if isinstance(outcome, (ev.Round1Passed, ev.Round2Passed)):
        report["fingerprints"] = msgspec.to_builtins(outcome.fingerprints)
    if isinstance(outcome, ev.GateFailed):
        report["failures"] = outcome.failures
    return report


def _round_of(event: ev.Event) -> int:
    return 1 if isinstance(event, ev.Round1Passed) else 2


class Mirrors:
    """Keeps the file views in step with the log of one writing session."""

    def __init__(self, ws: Workspace):
        self.ws = ws
        self._events: list[ev.Event] = []

    @property
    def metrics_path(self) -> Path:
        return self.ws.reports_dir / "metrics.jsonl"

    @property
    def manifest_path(self) -> Path:
        return self.ws.reports_dir / "ckpt_manifest.jsonl"

    @property
    def train_log_path(self) -> Path:
        return self.ws.logs_dir / "train.log"

    def rebuild(self, events: list[ev.Event]) -> None:
        self._events = list(events)
        atomic_write_bytes(self.metrics_path, b"".join(metrics_line(e) for e in events if isinstance(e, ev.TrainStep)))
        atomic_write_bytes(self.manifest_path, b"".join(manifest_line(e) for e in events if isinstance(e, ev.CheckpointSaved)))
        atomic_write_bytes(self.train_log_path, "".join(log_line(e) + "\n" for e in events).encode())
        for round_no in (1, 2):
            self._write_round(round_no)

    def __call__(self, event: ev.Event) -> None:
        self._events.append(event)
        _append(self.train_log_path, (log_line(event) + "\n").encode())
        if isinstance(event, ev.TrainStep):
            _append(self.metrics_path, metrics_line(event))
        elif isinstance(event, ev.CheckpointSaved):
            _append(self.manifest_path, manifest_line(event))
        elif isinstance(event, (ev.Round1Passed, ev.Round2Passed, ev.GateFailed)):
            self._write_round(_round_of(event) if not isinstance(event, ev.GateFailed) else event.round)

    def _write_round(self, round_no: int) -> None:
        report = round_report(round_no, self._events)
        name = "round1.json" if round_no == 1 else "round2_pass.json"
        path = self.ws.reports_dir / "preflight" / name
        if report is None or (round_no == 2 and not report["passed"]):
            if round_no == 2 and report is not None:
                atomic_write_bytes(path.with_name("round2.json"), msgspec.json.format(_ENCODER.encode(report)))
            return
        atomic_write_bytes(path, msgspec.json.format(_ENCODER.encode(report)))


def _append(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
