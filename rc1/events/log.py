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
import itertools
import operator
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import msgspec

from rc1 import failpoints
from rc1.errors import BadInput, CorruptLog, DiskFull, LogBusy, WrittenByNewerRc1
from rc1.events.line_digests import line_digests
from rc1.events.schema import EVENT_TYPES, GENESIS_HASH, SCHEMA_VERSION, UPCASTERS, AnyEvent, Event, needs_upcast, upcast
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


class Anchor(msgspec.Struct, frozen=True, kw_only=True):
    """A line the log held when its writer last looked: its seq, its sha256, and where it lies in the file."""

    seq: int
    hash: str
    line_start: int
    end: int  # just past its newline: where the lines after it begin


class LineHashes(Sequence):
    """The chain hash of every line read, kept as one string of 64-hex-digit digests: a million lines are one
    object, not a million, and the chain check compares them in one string comparison."""

    __slots__ = ("hex",)

    def __init__(self, hex_digests: str = ""):
        self.hex = hex_digests

    def __len__(self) -> int:
        return len(self.hex) // 64

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self.hex[64 * index: 64 * index + 64]


class LogContents(msgspec.Struct, kw_only=True):
    path: Path
    events: list[Event]
    line_hashes: LineHashes
    good_bytes: int  # where the complete, decodable lines end in the file
    torn: bytes = b""  # bytes after good_bytes (torn tail), empty when clean
    chain_breaks: list[ChainBreak] = msgspec.field(default_factory=list)
    last_line_start: int = 0  # where the last good line begins (a snapshot's anchor reads it back)
    base: Anchor | None = None  # the anchor these lines follow (read after a snapshot), None from the log's start

    @property
    def head_hash(self) -> str:
        if self.line_hashes:
            return self.line_hashes[-1]
        return self.base.hash if self.base else GENESIS_HASH

    @property
    def next_seq(self) -> int:
        if self.events:
            return self.events[-1].seq + 1
        return self.base.seq + 1 if self.base else 0

    @property
    def anchor(self) -> Anchor | None:
        """The last good line, as an anchor a snapshot can record (None for an empty log)."""
        if self.events:
            return Anchor(seq=self.events[-1].seq, hash=self.line_hashes[-1], line_start=self.last_line_start,
                          end=self.good_bytes)
        return self.base


def _decode_line(line: bytes) -> Event:
    try:
        event = _DECODER.decode(line)
        if event.v >= SCHEMA_VERSION or not needs_upcast(event):
            return event
        raw = _RAW_DECODER.decode(line)  # an older shape that still decodes: read it through the upcasters
        return msgspec.convert(upcast(raw), AnyEvent)
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


# A log this big is hashed by a second process while this one decodes it (rc1/events/line_digests.py).
PARALLEL_BYTES = 32 * 2**20
_CHUNK = 4 * 2**20


def read_log(path: Path) -> LogContents:
    """Read and verify a whole log. Raises CorruptLog for damage before the tail."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return LogContents(path=path, events=[], line_hashes=LineHashes(), good_bytes=0)
    if size >= PARALLEL_BYTES and len(os.sched_getaffinity(0)) >= 2:
        contents = _read_intact_in_parallel(path, size)
        if contents is not None:
            return contents
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return LogContents(path=path, events=[], line_hashes=LineHashes(), good_bytes=0)
    return parse_log(data, path)


def _read_intact_in_parallel(path: Path, size: int) -> LogContents | None:
    """A big log, decoded here in chunks while a second process hashes its lines. Only an intact log is
    returned: on any decode error or chain break it gives None, and the whole log is read again line by line,
    which names the damage (the usual path, on one core)."""
    hashing = _HashingProcess.start(path, size)
    if hashing is None:
        return None
    try:
        decoded = _decode_in_chunks(path)
        if decoded is None:
            return None
        events, good_bytes, last_line_start, torn = decoded
        _refuse_newer(events, path, 1)
        hashes = hashing.result(path, good_bytes)
        if hashes is None or len(hashes) < len(events) or _chain_breaks(events, hashes, quick_only=True):
            return None
        return LogContents(path=path, events=events, line_hashes=LineHashes(hashes.hex[: 64 * len(events)]),
                           good_bytes=good_bytes, torn=torn, last_line_start=last_line_start)
    finally:
        hashing.stop()


def _decode_in_chunks(path: Path) -> tuple[list[Event], int, int, bytes] | None:
    """(events, where the whole lines end, where the last begins, the bytes after it) read through one reused
    buffer, so the decode works on bytes still in cache; None when any line does not decode."""
    buffer = bytearray(2 * _CHUNK)
    view = memoryview(buffer)
    events: list[Event] = []
    held = offset = last_line_start = 0  # bytes in the buffer; file offset of the buffer's start
    with open(path, "rb", buffering=0) as fh:
        while True:
            if held == len(buffer):  # one line longer than the buffer: make room
                buffer.extend(bytes(len(buffer)))
                view.release()
                view = memoryview(buffer)
            count = fh.readinto(view[held: min(len(buffer), held + _CHUNK)])
            if not count:
                view.release()
                return events, offset, last_line_start, bytes(buffer[:held])
            held += count
            end = buffer.rfind(b"\n", 0, held) + 1
            if not end:
                continue
            try:
                decoded = _DECODER.decode_lines(view[:end])
            except (msgspec.DecodeError, msgspec.ValidationError):
                decoded = None
            if decoded is None or _has_older_shapes(decoded):
                view.release()
                return None
            events.extend(decoded)
            last_line_start = offset + buffer.rfind(b"\n", 0, end - 1) + 1
            buffer[: held - end] = view[end:held]
            held -= end
            offset += end


def read_log_after(path: Path, anchor: Anchor) -> LogContents | None:
    """The lines after `anchor`, verified from it, when the log still holds that exact line where it was and
    the lines after it chain on from it; None otherwise (read the whole log then)."""
    try:
        with open(path, "rb") as fh:
            if anchor.end > os.fstat(fh.fileno()).st_size:
                return None
            fh.seek(anchor.line_start)
            line = fh.read(anchor.end - anchor.line_start)
            if not line.endswith(b"\n") or line_hash(line[:-1]) != anchor.hash:
                return None
            tail = parse_log(fh.read(), path, base=anchor)
    except FileNotFoundError:
        return None
    return None if tail.chain_breaks else tail


def parse_log(data: bytes, path: Path, *, base: Anchor | None = None) -> LogContents:
    """The lines of `data` (a whole log, or the bytes after `base`), decoded and chain-checked."""
    first_seq, prev = (base.seq + 1, base.hash) if base else (0, GENESIS_HASH)
    first_line, offset = first_seq + 1, base.end if base else 0
    end = data.rfind(b"\n") + 1
    body, torn = data[:end], data[end:]
    try:
        events = _DECODER.decode_lines(body)
        if _has_older_shapes(events):
            raise _OlderShapes
    except (msgspec.DecodeError, msgspec.ValidationError, _OlderShapes):
        events = []
        lines = body.split(b"\n")[:-1]
        start = 0
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
                torn = body[start:] + torn
                body = body[:start]
                break
            start += len(line) + 1
    _refuse_newer(events, path, first_line)
    hashes = LineHashes(line_digests(body))
    last_line_start = body.rfind(b"\n", 0, len(body) - 1) + 1 if body else 0
    return LogContents(
        path=path,
        events=events,
        line_hashes=hashes,
        good_bytes=offset + len(body),
        torn=torn,
        chain_breaks=_chain_breaks(events, hashes, first_seq, prev, first_line),
        last_line_start=offset + last_line_start if body else (base.line_start if base else 0),
        base=base,
    )


class _OlderShapes(Exception):
    """Lines of an older schema whose type has changed shape since: decoded one by one, through the upcasters."""


_VERSION = operator.attrgetter("v")


# The event classes some older version wrote in another shape: only their lines can need the upcasters.
_RESHAPED = frozenset(EVENT_TYPES[kind] for kind, _ in UPCASTERS)


def _has_older_shapes(events: list[Event]) -> bool:
    if min(map(_VERSION, events), default=SCHEMA_VERSION) == SCHEMA_VERSION:
        return False
    return any(map(_RESHAPED.__contains__, map(type, events))) and any(map(needs_upcast, events))


def _refuse_newer(events: list[Event], path: Path, first_line: int) -> None:
    if max(map(_VERSION, events), default=SCHEMA_VERSION) <= SCHEMA_VERSION:
        return
    newer = next((i for i, event in enumerate(events) if event.v > SCHEMA_VERSION), None)
    if newer is not None:  # a known type that still decoded: its version says a newer rc1 wrote it
        event = events[newer]
        raise WrittenByNewerRc1(f"{path}:{first_line + newer}: event type {type(event).__struct_config__.tag!r}, schema "
                                f"v{event.v} (this rc1 reads up to v{SCHEMA_VERSION}) was written by a newer rc1: "
                                "upgrade rc1 to read this log (nothing was changed)")


class _HashingProcess:
    """rc1/events/line_digests.py on the first bytes of a log, running beside this process's decode."""

    def __init__(self, process: subprocess.Popen):
        self._process = process

    @classmethod
    def start(cls, path: Path, size: int) -> "_HashingProcess | None":
        script = Path(__file__).with_name("line_digests.py")
        try:
            process = subprocess.Popen([sys.executable, "-S", str(script), str(path), str(size)],
                                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        except OSError:
            return None
        return cls(process)

    def result(self, path: Path, good_bytes: int) -> LineHashes | None:
        """The hashes of the lines in the first `good_bytes` of the log (lines appended after the process read
        the file are hashed here); None when the process failed."""
        out, _ = self._process.communicate()
        if self._process.returncode != 0 or b"\n" not in out:
            return None
        header, digests = out.split(b"\n", 1)
        covered = int(header)
        if covered > good_bytes:
            return None  # the log is shorter than when the process read it: read it again whole
        hex_digests = digests.hex()
        if covered < good_bytes:
            with open(path, "rb") as fh:
                fh.seek(covered)
                hex_digests += line_digests(fh.read(good_bytes - covered))
        return LineHashes(hex_digests)

    def stop(self) -> None:
        if self._process.poll() is None:
            self._process.kill()
            self._process.wait()
        if self._process.stdout is not None:
            self._process.stdout.close()


def _chain_breaks(events: list[Event], hashes: LineHashes, first_seq: int = 0, prev: str = GENESIS_HASH,
                  first_line: int = 1, *, quick_only: bool = False) -> list[ChainBreak] | bool:
    """The breaks in the chain, [] when intact. With `quick_only`, just whether it is broken (True/False)."""
    # An intact chain in two passes: the seqs count up by one from first_seq, and each line's prev is the hash
    # of the line before it (the first line's, `prev`), compared as one string against the joined hashes.
    intact = (all(map(operator.eq, map(_SEQ, events), itertools.count(first_seq)))
              and (not events or (events[0].prev == prev
                                  and hashes.hex.startswith("".join([event.prev for event in events[1:]])))))
    if intact or quick_only:
        return not intact if quick_only else []
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


_SEQ = operator.attrgetter("seq")


def now_iso() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="microseconds")


_NO_SPACE = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)  # the disk, the quota, or a file size limit ran out


class EventLog:
    """The single writer of one run's log. Use as a context manager; holds the flock until closed."""

    def __init__(self, path: Path, lock_path: Path, run: str, *, allow_torn: bool = False, after: Anchor | None = None):
        """`after`: a line a snapshot says the log holds. When it does, only the lines after it are read and
        chain-checked (opening a finished 1M-event run costs its tail, not its length); otherwise, and
        without it, the whole log is. `rc1 audit` always verifies the whole log."""
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
            self.contents = (read_log_after(path, after) if after is not None else None) or read_log(path)
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
    def anchor(self) -> Anchor | None:
        """The last line, with where it lies: what a snapshot records (None while the log is empty)."""
        if self._next_seq == 0:
            return None
        return Anchor(seq=self._next_seq - 1, hash=self._head, line_start=self._last_line_start, end=self._size)

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
