"""The head anchor: the (seq, hash) a writer last left, kept outside the log.

A hash chain proves no line was edited, not that none were cut off the end. Each
writing session records its head in events/<run>.head.json (and each checkpoint's
metadata records the head it saw); audit checks the log still holds them.
"""

from __future__ import annotations

import json

from rc1.events.audit import Finding
from rc1.events.log import read_log
from rc1.fsutil import atomic_write_text
from rc1.workspace import Workspace


def head_path(ws: Workspace):
    return ws.events_dir / f"{ws.run}.head.json"


def write_head(ws: Workspace, seq: int, digest: str) -> None:
    if seq >= 0:
        atomic_write_text(head_path(ws), json.dumps({"seq": seq, "hash": digest}))


def head_findings(ws: Workspace) -> list[Finding]:
    path = head_path(ws)
    if not path.exists():
        return []
    try:
        anchor = json.loads(path.read_text())
        seq, digest = int(anchor["seq"]), str(anchor["hash"])
    except (ValueError, KeyError, TypeError):
        return [Finding(check="anchor", seq=None, message=f"{path}: unreadable head anchor")]
    hashes = read_log(ws.log_path).line_hashes
    if seq >= len(hashes):
        return [Finding(check="anchor", seq=seq, message=f"the log ends at seq {len(hashes) - 1} but its writer left it at seq {seq}: lines were cut off the end")]
    if hashes[seq] != digest:
        return [Finding(check="anchor", seq=seq, message=f"seq {seq} hash differs from the one its writer recorded in {path.name}")]
    return []
