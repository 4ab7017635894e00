"""Projections of the log onto files people read: logs/train.log, reports/metrics.jsonl,
reports/ckpt_manifest.jsonl, reports/preflight/round{1,2}*.json.

They are views: kept up to date after each append, going on from where the last session left them (its snapshot
records their sizes). Views not in step with the log (a log without a snapshot, a view changed or cut under it) are
rebuilt from the whole log by `rc1 report`, or at a writing session's first append: a command that appends nothing
(`advance` on a finished run, a refused one) never pays for a rebuild, which at a million events costs ten times
reading the log. No decision is ever taken by reading them.
"""

from __future__ import annotations

import heapq
import os
from collections.abc import Callable
from pathlib import Path

import msgspec
import structlog

from rc1.core.fsutil import atomic_write_bytes
from rc1.core.workspace import Workspace
from rc1.run import events as ev
from rc1.views.library_log import is_library_line, line_ts

_ENCODER = msgspec.json.Encoder()


def metrics_line(event: ev.TrainStep) -> bytes:
    record = ev.recorded_fields(event)
    for key in ("v", "prev", "type"):
        record.pop(key, None)
    return _ENCODER.encode(record) + b"\n"


def manifest_line(event: ev.CheckpointSaved) -> bytes:
    record = {"seq": event.seq, "ts": event.ts, "step": event.step, "dir": event.dir, "files": event.files}
    return _ENCODER.encode(record) + b"\n"


def log_line(event: ev.Event) -> str:
    """One key=value line per event, rendered by structlog."""
    payload = {k: v for k, v in ev.recorded_fields(event).items() if k not in ("seq", "ts", "run", "v", "prev")}
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


class RoundAttempt(msgspec.Struct, kw_only=True):
    """The latest attempt at a round: its checks so far, and its outcome once decided."""

    checks: list[ev.CheckPassed | ev.CheckFailed] = msgspec.field(default_factory=list)
    outcome: ev.Round1Passed | ev.Round2Passed | ev.GateFailed | None = None

    def fold(self, event: ev.Event, round_no: int) -> bool:
        """Take in an event; True when it decided this round (its report file is due)."""
        if isinstance(event, (ev.CheckPassed, ev.CheckFailed)) and event.round == round_no:
            if self.outcome is not None:  # a new attempt begins
                self.checks, self.outcome = [], None
            self.checks.append(event)
        elif isinstance(event, (ev.Round1Passed, ev.Round2Passed, ev.GateFailed)) and _round_of(event) == round_no:
            self.outcome = event
            return True
        return False

    def report(self, round_no: int) -> dict | None:
        if not self.checks:
            return None
        outcome = self.outcome
        checks = [
            {
                "seq": e.seq,
                "name": e.name,
                "passed": isinstance(e, ev.CheckPassed),
                "measured": e.measured,
                "thresholds": e.thresholds,
                "detail": e.detail,
            }
            for e in self.checks
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
    if isinstance(event, ev.GateFailed):
        return event.round
    return 1 if isinstance(event, ev.Round1Passed) else 2


class MirrorState(msgspec.Struct, kw_only=True):
    """What the views need to go on from where a session left them: the size each file had (a file of another
    size was changed by someone else, or the session died between an append and its snapshot), and the
    latest attempt at each round."""

    sizes: dict[str, int]
    rounds: dict[int, RoundAttempt]


class Mirrors:
    """Keeps the file views in step with the log of one writing session: appended to after each event, so an
    append costs the same at a million events as at a hundred; rebuilt from the whole log only when the
    files are not where the snapshot left them."""

    def __init__(self, ws: Workspace):
        self.ws = ws
        self._rounds = {1: RoundAttempt(), 2: RoundAttempt()}
        self._rebuild_from: Callable[[], list[ev.Event]] | None = None  # set while the views are not in step

    def defer_rebuild(self, read_events: Callable[[], list[ev.Event]]) -> None:
        """The views are not in step with the log: rebuild them from `read_events()` (the whole log, the event being
        appended included) at the next event, not now. Until then their state is recorded as unknown."""
        self._rebuild_from = read_events

    @property
    def in_step(self) -> bool:
        return self._rebuild_from is None

    @property
    def metrics_path(self) -> Path:
        return self.ws.reports_dir / "metrics.jsonl"

    @property
    def manifest_path(self) -> Path:
        return self.ws.reports_dir / "ckpt_manifest.jsonl"

    @property
    def train_log_path(self) -> Path:
        return self.ws.train_log_path

    def written(self) -> list[Path]:
        """Every view file of the run that exists now (what `rc1 report` names)."""
        rounds = [
            self.ws.reports_dir / "preflight" / name for name in ("round1.json", "round2.json", "round2_pass.json")
        ]
        return [path for path in (*self._files(), *rounds) if path.exists()]

    def _files(self) -> tuple[Path, ...]:
        """The views that are appended to (the round reports are rewritten whole from the round folds)."""
        return self.metrics_path, self.manifest_path, self.train_log_path

    def rebuild(self, events: list[ev.Event]) -> None:
        self._rebuild_from = None
        self._rounds = {1: RoundAttempt(), 2: RoundAttempt()}
        for event in events:
            for round_no, attempt in self._rounds.items():
                attempt.fold(event, round_no)
        atomic_write_bytes(self.metrics_path, b"".join(metrics_line(e) for e in events if isinstance(e, ev.TrainStep)))
        atomic_write_bytes(
            self.manifest_path, b"".join(manifest_line(e) for e in events if isinstance(e, ev.CheckpointSaved))
        )
        atomic_write_bytes(
            self.train_log_path, "".join(_merged([log_line(e) for e in events], self._library_lines())).encode()
        )
        for round_no in (1, 2):
            self._write_round(round_no)

    def library_line(self, line: str) -> None:
        """A warning or library record of this session (rc1/views/library_log.py)."""
        _append(self.train_log_path, (line + "\n").encode())

    def _library_lines(self, since: int = 0) -> list[str]:
        """The library lines train.log holds from byte `since` on: a rebuild keeps them."""
        try:
            with open(self.train_log_path, "rb") as fh:
                fh.seek(since)
                text = fh.read().decode(errors="replace")
        except FileNotFoundError:
            return []
        return [line for line in text.splitlines() if is_library_line(line)]

    def resume(self, state: bytes, tail: list[ev.Event]) -> bool:
        """Go on from a snapshot's state and the events after it; False (nothing done) when a view is shorter
        than that state recorded or the state is unreadable, and the caller must rebuild from the whole log.
        A view longer than recorded holds the lines of a session that ended without its last snapshot (a
        kill): they are cut and written again from the tail, train.log's library lines kept."""
        try:
            saved = msgspec.json.decode(state, type=MirrorState | None)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return False
        current = self._sizes()
        if saved is None or any(size < saved.sizes.get(name, 0) for name, size in current.items()):
            return False
        recorded = {name: saved.sizes.get(name, 0) for name in current}
        library = self._library_lines(since=recorded[self.train_log_path.name])
        for path in self._files():
            if current[path.name] > recorded[path.name]:
                os.truncate(path, recorded[path.name])
        self._rounds = {1: saved.rounds.get(1, RoundAttempt()), 2: saved.rounds.get(2, RoundAttempt())}
        for event in tail:
            self._append_event(event)
        _append(self.train_log_path, "".join(_merged([log_line(e) for e in tail], library)).encode())
        for round_no in (1, 2):
            self._write_round(round_no)
        return True

    def state(self) -> bytes:
        """What the snapshot records of the views: `null` while they are not in step (the next session defers again)."""
        if not self.in_step:
            return _ENCODER.encode(None)
        return _ENCODER.encode(MirrorState(sizes=self._sizes(), rounds=self._rounds))

    def _sizes(self) -> dict[str, int]:
        sizes = {}
        for path in self._files():
            try:
                sizes[path.name] = path.stat().st_size
            except FileNotFoundError:
                sizes[path.name] = -1
        return sizes

    def __call__(self, event: ev.Event) -> None:
        if self._rebuild_from is not None:
            self.rebuild(self._rebuild_from())  # the log holds `event` already: the rebuild writes its lines
            return
        _append(self.train_log_path, (log_line(event) + "\n").encode())
        self._append_event(event)

    def _append_event(self, event: ev.Event) -> None:
        """Everything an event adds but its train.log line."""
        if isinstance(event, ev.TrainStep):
            _append(self.metrics_path, metrics_line(event))
        elif isinstance(event, ev.CheckpointSaved):
            _append(self.manifest_path, manifest_line(event))
        for round_no, attempt in self._rounds.items():
            if attempt.fold(event, round_no):
                self._write_round(round_no)

    def _write_round(self, round_no: int) -> None:
        report = self._rounds[round_no].report(round_no)
        name = "round1.json" if round_no == 1 else "round2_pass.json"
        path = self.ws.reports_dir / "preflight" / name
        if report is None or (round_no == 2 and not report["passed"]):
            if round_no == 2 and report is not None:
                atomic_write_bytes(path.with_name("round2.json"), msgspec.json.format(_ENCODER.encode(report)))
            return
        atomic_write_bytes(path, msgspec.json.format(_ENCODER.encode(report)))


def _merged(event_lines: list[str], library_lines: list[str]) -> list[str]:
    """Both kinds of line in time order, each "\n"-terminated (events keep their log order among themselves)."""
    if not library_lines:
        return [line + "\n" for line in event_lines]
    merged = heapq.merge(event_lines, library_lines, key=line_ts)
    return [line + "\n" for line in merged]


def _append(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
