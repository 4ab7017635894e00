"""The head anchor: the (seq, hash) a writer last left, kept outside the log.

A hash chain proves no line was edited, not that none were cut off the end. Each writing session leaves
its head in the projection snapshot (events/<run>.snapshot.json, rc1/events/snapshot.py), and each
checkpoint's metadata records the head it saw; audit checks that the log still holds them.
"""

from __future__ import annotations

import msgspec

from rc1.events.audit import Finding
from rc1.events.log import read_log
from rc1.events.snapshot import snapshot_path
from rc1.workspace import Workspace


class _Head(msgspec.Struct):
    seq: int
    hash: str


def head_findings(ws: Workspace) -> list[Finding]:
    path = snapshot_path(ws)
    if not path.exists():
        return []
    try:
        head = msgspec.json.decode(path.read_bytes(), type=_Head)  # the snapshot's anchor fields only
    except (msgspec.DecodeError, msgspec.ValidationError):
        return [Finding(check="anchor", seq=None, message=f"{path}: unreadable head anchor")]
    seq, digest = head.seq, head.hash
    hashes = read_log(ws.log_path).line_hashes
    if seq >= len(hashes):
        return [Finding(check="anchor", seq=seq, message=f"the log ends at seq {len(hashes) - 1} but its writer left it at seq {seq}: lines were cut off the end")]
    if hashes[seq] != digest:
        return [Finding(check="anchor", seq=seq, message=f"seq {seq} hash differs from the one its writer recorded in {path.name}")]
    return []
