"""The append-only, hash-chained JSONL event log of one run.

Reading decodes all complete lines in bulk and treats the tail on its own: a last
line without a newline, or one that does not decode, is a torn tail (repairable);
anything undecodable before it is corruption. Writing takes an exclusive flock for
the whole command, appends each line with one checked `os.write`, then fsyncs.
"""

from __future__ import annotations

import datetime as dt
import errno
import fcntl
import hashlib
import os
import shutil
from pathlib import Path

import msgspec

from rc1 import failpoints
from rc1.errors import BadInput, CorruptLog, DiskFull, LogBusy, WrittenByNewerRc1
from rc1.events.schema import EVENT_TYPES, GENESIS_HASH, SCHEMA_VERSION, AnyEvent, Event, upcast
from rc1.fsutil import fsync_dir

_DECODER = msgspec.json.Decoder(AnyEvent)
_RAW_DECODER = msgspec.json.Decoder()
_ENCODER = msgspec.json.Encoder()


def line_hash(line: bytes) -> str:
    """The chain hash of a stored line (its bytes without the terminating newline)."""
    return hashlib.sha256(line).hexdigest()


class ChainBreak(msgspec.Struct, frozen=True):
    line: int  # 1-based line number in the file
    seq: int
    message: str


class LogContents(msgspec.Struct, kw_only=True):
    path: Path
    events: list[Event]
    line_hashes: list[str]
    good_bytes: int  # length of the prefix made of complete, decodable lines
    torn: bytes = b""  # bytes after good_bytes (torn tail), empty when clean
    chain_breaks: list[ChainBreak] = msgspec.field(default_factory=list)
    last_line_start: int = 0  # where the last good line begins (a snapshot's anchor reads it back)

    @property
    def head_hash(self) -> str:
        return self.line_hashes[-1] if self.line_hashes else GENESIS_HASH

    @property
    def next_seq(self) -> int:
        return self.events[-1].seq + 1 if self.events else 0


def _decode_line(line: bytes) -> Event:
    try:
        return _DECODER.decode(line)
    except msgspec.ValidationError:
        raw = _RAW_DECODER.decode(line)
        if not isinstance(raw, dict):
            raise
        version, kind = raw.get("v", SCHEMA_VERSION), raw.get("type")
        enveloped = isinstance(raw.get("seq"), int) and isinstance(raw.get("prev"), str) and isinstance(raw.get("run"), str)
        if enveloped and ((isinstance(version, int) and version > SCHEMA_VERSION)
                          or (isinstance(kind, str) and kind not in EVENT_TYPES)):
            raise WrittenByNewerRc1(f"event type {kind!r}, schema v{version} (this rc1 reads up to v{SCHEMA_VERSION})") from None
        if version >= SCHEMA_VERSION:
            raise
        return msgspec.convert(upcast(raw), AnyEvent)


def read_log(path: Path) -> LogContents:
    """Read and verify a log. Raises CorruptLog for damage before the tail."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return LogContents(path=path, events=[], line_hashes=[], good_bytes=0)
    return parse_log(data, path)


def parse_log(data: bytes, path: Path, *, first_seq: int = 0, prev: str = GENESIS_HASH, first_line: int = 1) -> LogContents:
    """The lines of `data` (a whole log, or the tail after a snapshot's anchor: `first_seq`, `prev` and the
    1-based `first_line` of its first line), decoded and chain-checked; byte counts are relative to `data`."""
    end = data.rfind(b"\n") + 1
    body, torn = data[:end], data[end:]
    lines = body.split(b"\n")[:-1]
    try:
        events = _DECODER.decode_lines(body)
    except (msgspec.DecodeError, msgspec.ValidationError):
        events = []
        offset = 0
        for index, line in enumerate(lines):
            try:
                events.append(_decode_line(line))
            except WrittenByNewerRc1 as e:  # a whole line, newline included: not torn, just not ours to read
                raise WrittenByNewerRc1(f"{path}:{first_line + index}: {e} was written by a newer rc1: upgrade rc1 "
                                        "to read this log (nothing was changed)") from None
            except (msgspec.DecodeError, msgspec.ValidationError, KeyError) as e:
                if index != len(lines) - 1:
                    number, total = first_line + index, first_line + len(lines) - 1
                    raise CorruptLog(
                        f"{path}:{number}: line {number} of {total} does not decode ({e}); "
                        "damage before the tail cannot be repaired — restore the log from a copy"
                    ) from None
                torn = body[offset:] + torn
                lines = lines[:index]
                body = body[:offset]
                break
            offset += len(line) + 1
    newer = next((i for i, event in enumerate(events) if event.v > SCHEMA_VERSION), None)
    if newer is not None:  # a known type that still decoded: its version says a newer rc1 wrote it
        event = events[newer]
        raise WrittenByNewerRc1(f"{path}:{first_line + newer}: event type {type(event).__struct_config__.tag!r}, schema "
                                f"v{event.v} (this rc1 reads up to v{SCHEMA_VERSION}) was written by a newer rc1: "
                                "upgrade rc1 to read this log (nothing was changed)")
    hashes = [line_hash(line) for line in lines]
    return LogContents(
        path=path,
        events=events,
        line_hashes=hashes,
        good_bytes=len(body),
        torn=torn,
        chain_breaks=_chain_breaks(events, hashes, first_seq, prev, first_line),
        last_line_start=body.rfind(b"\n", 0, len(body) - 1) + 1 if body else 0,
    )


def _chain_breaks(events: list[Event], hashes: list[str], first_seq: int = 0, prev: str = GENESIS_HASH,
                  first_line: int = 1) -> list[ChainBreak]:
    breaks = []
    expected_prev = prev
    for index, event in enumerate(events):
        line, wanted = first_line + index, first_seq + index
        if event.seq != wanted:
            breaks.append(ChainBreak(line, event.seq, f"seq {event.seq} where {wanted} was expected (gap, duplicate or reordering)"))
        if event.prev != expected_prev:
            breaks.append(ChainBreak(line, event.seq, "prev hash does not match the previous line (edited, deleted or reordered line)"))
        expected_prev = hashes[index]
    return breaks


def now_iso() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="microseconds")


_NO_SPACE = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)  # the disk, the quota, or a file size limit ran out


class EventLog:
    """The single writer of one run's log. Use as a context manager; holds the flock until closed."""

    def __init__(self, path: Path, lock_path: Path, run: str, *, allow_torn: bool = False):
        self.path = path
        self.run = run
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fd: int | None = None
        self._lock_fd: int | None = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            os.close(self._lock_fd)
            self._lock_fd = None
            if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise LogBusy(f"{path}: another rc1 process is writing this run (lock {lock_path} is held); wait for it or stop it") from None
            raise
        try:
            self.contents = read_log(path)
            if self.contents.chain_breaks:
                first = self.contents.chain_breaks[0]
                raise CorruptLog(f"{path}:{first.line}: hash chain broken at seq {first.seq}: {first.message}; run `rc1 audit`")
            if self.contents.torn and not allow_torn:
                raise BadInput(
                    f"{path}: torn tail of {len(self.contents.torn)} bytes at byte {self.contents.good_bytes}; "
                    "run `rc1 repair` to quarantine it"
                )
        except BaseException:
            self.close()
            raise
        self._next_seq = self.contents.next_seq
        self._head = self.contents.head_hash
        self._size, self._last_line_start = self.contents.good_bytes, self.contents.last_line_start
        self._listeners: list = []

    def subscribe(self, listener) -> None:
        """listener(event) runs after each durable append (projections, mirrors)."""
        self._listeners.append(listener)

    @property
    def head(self) -> tuple[int, str]:
        """(seq, hash) of the last line, the anchor checkpoints and snapshots record."""
        return self._next_seq - 1, self._head

    @property
    def extent(self) -> tuple[int, int]:
        """(bytes of whole lines, where the last one begins): where a snapshot's anchor line lies."""
        return self._size, self._last_line_start

    def append(self, event: Event) -> Event:
        stamped = msgspec.structs.replace(event, seq=self._next_seq, ts=now_iso(), run=self.run, v=SCHEMA_VERSION, prev=self._head)
        line = _ENCODER.encode(stamped)
        self._write_durably(line + b"\n", f"append:{type(stamped).__struct_config__.tag}")
        self._next_seq += 1
        self._head = line_hash(line)
        self._last_line_start, self._size = self._size, self._size + len(line) + 1
        for listener in self._listeners:
            listener(stamped)
        return stamped

    def truncate_torn_tail(self) -> None:
        """Cut the log back to its last good line (repair only; the caller has quarantined the bytes)."""
        fd = os.open(self.path, os.O_WRONLY)
        try:
            os.ftruncate(fd, self.contents.good_bytes)
            os.fsync(fd)
        finally:
            os.close(fd)

    def _write_durably(self, data: bytes, kill_point: str) -> None:
        if self._fd is None:
            created = not self.path.exists()
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            if created:
                fsync_dir(self.path.parent)
        start = os.fstat(self._fd).st_size  # the last good offset: this writer holds the lock, nobody else appends
        view = memoryview(data)
        try:
            while view:
                written = os.write(self._fd, view)
                if written <= 0:
                    raise OSError(errno.EIO, f"{self.path}: write returned {written}")
                view = view[written:]
        except OSError as e:
            # A partial line would be a torn tail only `rc1 repair` clears: cut it back before saying why.
            os.ftruncate(self._fd, start)
            os.fsync(self._fd)
            if e.errno in _NO_SPACE:
                free = shutil.disk_usage(self.path.parent).free
                raise DiskFull(f"{self.path}: no space to append an event ({os.strerror(e.errno)}); {free / 2**20:.1f} MiB "
                               f"free on the filesystem of {self.path.parent}; the partial line was cut off, so the log "
                               "ends at its last whole event: free space, then rc1 advance resumes") from None
            raise
        failpoints.reached(kill_point)
        # A failed fsync is fatal and never retried: the kernel may already have marked the page clean.
        os.fsync(self._fd)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # closing releases the flock
            self._lock_fd = None

    def __enter__(self) -> "EventLog":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
