"""Audit: everything a run's log claims, checked against the log itself and the files it names.

Each finding names the seq (or line) and what is wrong. The audit passes only when
there is no finding.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import msgspec

from rc1.core.errors import CorruptLog
from rc1.core.fsutil import sha256_file
from rc1.core.workspace import Workspace
from rc1.eventlog.log import read_log
from rc1.eventlog.monitor_audit import trip_findings
from rc1.eventlog.snapshot import snapshot_path
from rc1.run import events as ev
from rc1.run.replay import changed_gate_inputs, replay


class Finding(msgspec.Struct, frozen=True, kw_only=True):
    # chain | schema | torn_tail | transition | steps | checkpoint | archive | anchor | gate_inputs | export | monitors
    # | rescore | retrain
    check: str
    seq: int | None
    message: str


class AuditReport(msgspec.Struct, kw_only=True):
    log: str
    events: int
    findings: list[Finding]
    checks_run: list[str]
    # Refused events `rc1 repair` set aside (refused_set_aside): still in the log, never folded in; listed, not
    # findings, because a person decided, on the record, that the run goes on without them.
    set_aside: list[Finding] = msgspec.field(default_factory=list)
    # What the audit could not look at and why, without it being wrong: an export directory moved or deleted
    # (an export is made to be shipped), an export superseded by a later one to the same directory.
    notes: list[Finding] = msgspec.field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.findings


def audit_log(ws: Workspace, current: ev.Fingerprints | None) -> AuditReport:
    """Every check, over one full read of the log (a snapshot is never trusted here; only its anchor is read)."""
    log_path, workspace_root = ws.log_path, ws.root
    checks = [
        "chain",
        "schema",
        "torn_tail",
        "transition",
        "steps",
        "checkpoint",
        "archive",
        "anchor",
        "gate_inputs",
        "export",
        "monitors",
    ]
    try:
        contents = read_log(log_path)
    except CorruptLog as e:
        return AuditReport(
            log=str(log_path), events=0, findings=[Finding(check="schema", seq=None, message=str(e))], checks_run=checks
        )
    findings: list[Finding] = []
    for brk in contents.chain_breaks:
        findings.append(Finding(check="chain", seq=brk.seq, message=f"line {brk.line}: {brk.message}"))
    if contents.torn:
        findings.append(
            Finding(
                check="torn_tail",
                seq=None,
                message=f"torn tail: {len(contents.torn)} bytes after byte {contents.good_bytes} (run `rc1 repair`)",
            )
        )
    events = contents.events
    replayer = replay(events)
    for violation in replayer.projection.violations:
        findings.append(Finding(check="transition", seq=violation.seq, message=violation.message))
    set_aside = [
        Finding(check="transition", seq=v.seq, message=f"set aside: {v.message}") for v in replayer.projection.set_aside
    ]
    findings += _step_findings(events)
    findings += _checkpoint_findings(events, workspace_root, contents.line_hashes)
    findings += _head_findings(ws, contents.line_hashes)
    if current is not None:
        findings += _gate_input_findings(replayer.projection, current)
    export_findings, notes = _export_findings(events, workspace_root, contents.line_hashes)
    trips, owed = trip_findings(events)
    findings += [Finding(check="monitors", seq=t.seq, message=t.message) for t in trips]
    notes += [Finding(check="monitors", seq=t.seq, message=t.message) for t in owed]
    return AuditReport(
        log=str(log_path),
        events=len(events),
        findings=findings + export_findings,
        checks_run=checks,
        set_aside=set_aside,
        notes=notes,
    )


def _step_findings(events: list[ev.Event]) -> list[Finding]:
    """Within a training segment steps go 1 by 1 from the resume point. (Training without round 2 in force is
    the machine's to catch: training_started is refused in INIT and R1_PASSED, a `transition` finding.)"""
    findings = []
    expected: int | None = None
    for event in events:
        if isinstance(event, ev.TrainingStarted):
            expected = event.resume_from_step + 1
        elif isinstance(event, ev.TrainStep):
            if expected is None:
                findings.append(
                    Finding(
                        check="steps", seq=event.seq, message=f"train_step {event.step} outside any training segment"
                    )
                )
            elif event.step != expected:
                findings.append(
                    Finding(
                        check="steps",
                        seq=event.seq,
                        message=f"train_step {event.step} where step {expected} was expected",
                    )
                )
            expected = event.step + 1
    return findings


def _checkpoint_findings(events: list[ev.Event], root: Path, line_hashes: Sequence[str]) -> list[Finding]:
    """Every checkpoint file matches its recorded sha256, and the log anchor it recorded is still there. A directory
    (or shard) written again later (a line resumed or rolled back before it trains that step again) is held to the
    last event that wrote it: the earlier one's files are gone by design."""
    last = {}
    for event in events:
        if isinstance(event, ev.CheckpointSaved | ev.BestPromoted):
            last[event.dir] = event.seq
        elif isinstance(event, ev.EvalCompleted):
            last.update({path: event.seq for path in event.rollouts})
    findings = []
    for event in events:
        if isinstance(event, ev.BestPromoted) and last[event.dir] == event.seq:  # a copy in best/, like a checkpoint
            findings += _file_findings(root, event.dir, event.files, event.seq)
        if isinstance(event, ev.EvalCompleted):  # its rollout archive shard
            current = {path: sha for path, sha in event.rollouts.items() if last[path] == event.seq}
            findings += _file_findings(root, ".", current, event.seq, check="archive")
        if not isinstance(event, ev.CheckpointSaved) or last[event.dir] != event.seq:
            continue
        directory = root / event.dir
        findings += _file_findings(root, event.dir, event.files, event.seq)
        anchor = event.files.get("rc1_meta.json") and _anchor(directory / "rc1_meta.json")
        if anchor:
            seq, digest = anchor
            if seq >= len(line_hashes):
                findings.append(
                    Finding(
                        check="anchor",
                        seq=event.seq,
                        message=f"{event.dir} saw seq {seq} but the log ends at seq {len(line_hashes) - 1}: the log "
                        "was truncated",
                    )
                )
            elif line_hashes[seq] != digest:
                findings.append(
                    Finding(
                        check="anchor",
                        seq=event.seq,
                        message=f"{event.dir} saw seq {seq} with a different hash: the log was rewritten",
                    )
                )
    return findings


class _Head(msgspec.Struct):
    seq: int
    hash: str


def _head_findings(ws: Workspace, line_hashes: Sequence[str]) -> list[Finding]:
    """A hash chain proves no line was edited, not that none were cut off the end: the head its last writer
    left in the snapshot must still be in the log."""
    path = snapshot_path(ws)
    if not path.exists():
        return []
    try:
        head = msgspec.json.decode(path.read_bytes(), type=_Head)  # the snapshot's anchor fields only
    except (msgspec.DecodeError, msgspec.ValidationError):
        return [Finding(check="anchor", seq=None, message=f"{path}: unreadable head anchor")]
    if head.seq >= len(line_hashes):
        return [
            Finding(
                check="anchor",
                seq=head.seq,
                message=f"the log ends at seq {len(line_hashes) - 1} but its writer left it at seq {head.seq}: lines "
                "were cut off the end",
            )
        ]
    if line_hashes[head.seq] != head.hash:
        return [
            Finding(
                check="anchor",
                seq=head.seq,
                message=f"seq {head.seq} hash differs from the one its writer recorded in {path.name}",
            )
        ]
    return []


def _export_findings(
    events: list[ev.Event], root: Path, line_hashes: Sequence[str]
) -> tuple[list[Finding], list[Finding]]:
    """Every model export still holds exactly the files its model_exported recorded (none missing, changed or added),
    and the log still holds the head its model card names. An export directory that is gone was moved or deleted
    (an export is made to leave this machine): a note, not a finding. Of several exports to one directory (the
    first deleted, the directory used again), only the last is checked."""
    findings: list[Finding] = []
    notes: list[Finding] = []
    exports = [e for e in events if isinstance(e, ev.ModelExported)]
    last = {e.out: e.seq for e in exports}
    for event in exports:
        if event.log_seq >= len(line_hashes) or line_hashes[event.log_seq] != event.log_hash:
            findings.append(
                Finding(
                    check="anchor",
                    seq=event.seq,
                    message=f"the model card of {event.out} names log seq "
                    f"{event.log_seq} ({event.log_hash[:12]}…), which the log no longer holds",
                )
            )
        directory = root / event.out
        if last[event.out] != event.seq:
            notes.append(
                Finding(
                    check="export",
                    seq=event.seq,
                    message=f"{event.out}: exported again at seq "
                    f"{last[event.out]}; this export's files are not checked",
                )
            )
            continue
        if not directory.is_dir():
            notes.append(
                Finding(
                    check="export",
                    seq=event.seq,
                    message=f"{event.out}: the export is not there (moved "
                    "or deleted); its files cannot be checked here (their sha256 are in the event and in "
                    "its model card)",
                )
            )
            continue
        findings += _file_findings(
            root, event.out, {rel: f.sha256 for rel, f in event.files.items()}, event.seq, check="export"
        )
        on_disk = {str(p.relative_to(directory)) for p in directory.rglob("*") if p.is_file() or p.is_symlink()}
        findings += [
            Finding(check="export", seq=event.seq, message=f"{Path(event.out) / rel}: not part of the export recorded")
            for rel in sorted(on_disk - event.files.keys())
        ]
    return findings, notes


def _file_findings(
    root: Path, directory: str, files: dict[str, str], seq: int, check: str = "checkpoint"
) -> list[Finding]:
    findings = []
    for rel, recorded in sorted(files.items()):
        path = root / directory / rel
        name = str(Path(directory) / rel)
        if not path.is_file():
            findings.append(Finding(check=check, seq=seq, message=f"{name}: missing"))
        elif sha256_file(path) != recorded:
            findings.append(Finding(check=check, seq=seq, message=f"{name}: sha256 differs from the one recorded"))
    return findings


def _anchor(meta_path: Path) -> tuple[int, str] | None:
    try:
        meta = json.loads(meta_path.read_text())
        return int(meta["log_seq"]), str(meta["log_hash"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _gate_input_findings(projection, current: ev.Fingerprints) -> list[Finding]:
    changed = changed_gate_inputs(projection, current)
    if changed is None:
        return []
    name, seq, inputs = changed
    return [
        Finding(
            check="gate_inputs", seq=seq, message=f"{input_name} changed since {name} passed ({old[:12]} -> {new[:12]})"
        )
        for input_name, old, new in inputs
    ]
