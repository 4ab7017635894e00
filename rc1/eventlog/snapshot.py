"""A snapshot of a run's projection, so that opening a run costs O(events since it), not O(log).

Every writing session leaves `events/<run>.snapshot.json` when it closes, and after each checkpoint: the
projection and the machine's state, anchored to the last line they cover (its seq, its sha256, where it
begins and ends in the file), and the file views' own state, which this layer keeps but does not read.
A reader or writer trusts the snapshot only when the log still holds that exact line there; it then decodes
and chain-checks the lines after it and folds them in. A snapshot that is missing, unreadable, of another
schema, of another projection (its shape digest differs: a field was added, renamed or retyped, or the domain's
code that folds it changed), or whose anchor line the log no longer holds is ignored: the log is replayed whole.
The log is always the authority; `rc1 audit` verifies the whole log and reads only the snapshot's anchor, to check
that no line was cut off the end.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path

import msgspec

from rc1 import run as run_package
from rc1.core.fsutil import atomic_write_bytes
from rc1.core.workspace import Workspace
from rc1.eventlog.lines import Anchor, LogContents
from rc1.eventlog.log import read_log_after, read_whole_log
from rc1.run.events import SCHEMA_VERSION
from rc1.run.machine import RunMachine
from rc1.run.projection import Projection
from rc1.run.replay import Replayer, replay


@cache
def fold_code() -> str:
    """The digest of the domain's code (rc1/run/: the events, the door, the machine, replay's mutators and the
    monitors' fold): what a fold means is that code, so a snapshot folded by other code is not trusted. No version
    to bump by hand; an rc1 whose domain changed in any way replays a run's log whole once, then snapshots again."""
    folder = Path(run_package.__file__).parent
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*.py")):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


@cache
def projection_shape(projection: type = Projection) -> str:
    """The digest of what a snapshot's projection is: its JSON schema (every field, type and default, nested
    structs included) and the code that folds it. A snapshot written by an rc1 whose projection differed is not
    read."""
    schema = msgspec.json.schema(projection)
    return hashlib.sha256(json.dumps([fold_code(), schema], sort_keys=True).encode()).hexdigest()[:16]


class Snapshot(msgspec.Struct, kw_only=True):
    v: int  # the event schema the projection was folded under
    shape: str = ""  # projection_shape() of the rc1 that wrote it ("": written before shapes were recorded)
    seq: int  # the last line it covers
    hash: str  # that line's sha256
    line_start: int  # where that line begins in the log
    end: int  # where it ends (its newline included): the tail begins here
    state: str  # the machine's state
    projection: Projection
    views: msgspec.Raw = msgspec.Raw(b"null")  # the file views' state (rc1/views/mirrors.py), opaque here

    @property
    def anchor(self) -> Anchor:
        return Anchor(seq=self.seq, hash=self.hash, line_start=self.line_start, end=self.end)

    def replayer(self) -> Replayer:
        """A replayer that continues from this snapshot."""
        replayer = Replayer()
        replayer.machine = RunMachine(initial=self.state)
        replayer.machine.complete = self.projection.complete
        replayer.projection = self.projection
        return replayer


class _Envelope(msgspec.Struct):
    shape: str = ""


def snapshot_path(ws: Workspace) -> Path:
    return ws.events_dir / f"{ws.run}.snapshot.json"


def write_snapshot(ws: Workspace, replayer: Replayer, anchor: Anchor | None, views: bytes = b"null") -> None:
    if anchor is None:
        return  # an empty log: nothing to anchor to
    snapshot = Snapshot(
        v=SCHEMA_VERSION,
        shape=projection_shape(),
        seq=anchor.seq,
        hash=anchor.hash,
        line_start=anchor.line_start,
        end=anchor.end,
        state=replayer.machine.state,
        projection=replayer.projection,
        views=msgspec.Raw(views),
    )
    atomic_write_bytes(snapshot_path(ws), msgspec.json.encode(snapshot))


def read_snapshot(ws: Workspace) -> Snapshot | None:
    """The run's snapshot when there is one this rc1 can use (it may still be stale: its anchor decides)."""
    try:
        raw = snapshot_path(ws).read_bytes()
        # The envelope first: a projection of another shape may not even decode into this one, or (worse) decode
        # with a missing field silently defaulted (0 training segments where the log holds 1).
        if msgspec.json.decode(raw, type=_Envelope).shape != projection_shape():
            return None
        snapshot = msgspec.json.decode(raw, type=Snapshot)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None
    if snapshot.v != SCHEMA_VERSION or snapshot.projection.run not in ("", ws.run):
        return None
    return snapshot


def replay_log(ws: Workspace) -> tuple[Replayer, LogContents]:
    """The run's replayer, from a verified snapshot plus the lines after it when one holds, else from the whole
    log; and what was read (the tail only, on the fast path)."""
    snapshot = read_snapshot(ws)
    tail = read_log_after(ws.log_path, snapshot.anchor) if snapshot is not None else None
    if tail is not None:
        replayer = snapshot.replayer()
        replayer.apply_all(tail.events)
        return replayer, tail
    contents = read_whole_log(ws.log_path)
    return replay(contents.events), contents
