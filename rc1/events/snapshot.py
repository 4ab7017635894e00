"""A snapshot of a run's projection, so that `rc1 status` costs O(events since it), not O(log).

Every writing command leaves `events/<run>.snapshot.json` when it closes: the projection and the machine's
state, anchored to the last line they cover (its seq, its sha256, where it begins and ends in the file).
A reader trusts the snapshot only when the log still holds that exact line there; it then decodes and
chain-checks the lines after it and folds them in. A snapshot that is missing, unreadable, of another
schema, or whose anchor line the log no longer holds is ignored: the log is replayed whole. The log is
always the authority; `rc1 audit` never reads a snapshot.
"""

from __future__ import annotations

import os
from pathlib import Path

import msgspec

from rc1.events.log import LogContents, line_hash, parse_log, read_log
from rc1.events.replay import Projection, Replayer, replay
from rc1.events.schema import SCHEMA_VERSION
from rc1.fsutil import atomic_write_bytes
from rc1.machine import RunMachine
from rc1.workspace import Workspace


class Snapshot(msgspec.Struct, kw_only=True):
    v: int  # the event schema the projection was folded under
    seq: int  # the last line it covers
    hash: str  # that line's sha256
    line_start: int  # where that line begins in the log
    end: int  # where it ends (its newline included): the tail begins here
    state: str  # the machine's state
    projection: Projection


def snapshot_path(ws: Workspace) -> Path:
    return ws.events_dir / f"{ws.run}.snapshot.json"


def write_snapshot(ws: Workspace, replayer: Replayer, seq: int, digest: str, end: int, line_start: int) -> None:
    if seq < 0:
        return  # an empty log: nothing to anchor to
    snapshot = Snapshot(v=SCHEMA_VERSION, seq=seq, hash=digest, line_start=line_start, end=end,
                        state=replayer.machine.state, projection=replayer.projection)
    atomic_write_bytes(snapshot_path(ws), msgspec.json.encode(snapshot))


def replay_log(ws: Workspace) -> tuple[Replayer, LogContents]:
    """The run's replayer, from a verified snapshot plus the lines after it when one holds, else from the whole
    log; and what was read (the tail only, on the fast path)."""
    snapshot = _read_snapshot(ws)
    if snapshot is not None:
        try:
            with open(ws.log_path, "rb") as fh:
                size = os.fstat(fh.fileno()).st_size
                if snapshot.end <= size:
                    fh.seek(snapshot.line_start)
                    anchor = fh.read(snapshot.end - snapshot.line_start)
                    if anchor.endswith(b"\n") and line_hash(anchor[:-1]) == snapshot.hash:
                        tail = parse_log(fh.read(), ws.log_path, first_seq=snapshot.seq + 1, prev=snapshot.hash,
                                         first_line=snapshot.seq + 2)
                        if not tail.chain_breaks:
                            replayer = _from_snapshot(snapshot)
                            for event in tail.events:
                                replayer.apply(event)
                            return replayer, tail
        except FileNotFoundError:
            pass
    contents = read_log(ws.log_path)
    return replay(contents.events), contents


def _read_snapshot(ws: Workspace) -> Snapshot | None:
    try:
        snapshot = msgspec.json.decode(snapshot_path(ws).read_bytes(), type=Snapshot)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None
    if snapshot.v != SCHEMA_VERSION or snapshot.projection.run not in ("", ws.run):
        return None
    return snapshot


def _from_snapshot(snapshot: Snapshot) -> Replayer:
    replayer = Replayer()
    replayer.machine = RunMachine(initial=snapshot.state)
    replayer.machine.complete = snapshot.projection.complete
    replayer.projection = snapshot.projection
    return replayer
