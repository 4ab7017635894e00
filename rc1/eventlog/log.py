"""The append-only, hash-chained JSONL event log of one run: its readers and its single writer.

Reading verifies the whole log (rc1/eventlog/lines.py; a big one on two cores, rc1/eventlog/big_log.py), or only
the lines after an anchor a snapshot recorded. Writing takes an exclusive flock for the whole command, appends
each line with one checked `os.write`, then fsyncs.
"""

from __future__ import annotations

import datetime as dt
import errno
import fcntl
import os
import shutil
from pathlib import Path

import msgspec

from rc1.core import failpoints
from rc1.core.errors import BadInput, CorruptLog, DiskFull, LogBusy
from rc1.core.fsutil import fsync_dir
from rc1.eventlog.big_log import read_intact_in_parallel
from rc1.eventlog.lines import Anchor, LineHashes, LogContents, line_hash, parse_log
from rc1.run.events import SCHEMA_VERSION, Event

_ENCODER = msgspec.json.Encoder()

# A log this big is hashed by a second process while this one decodes it (rc1/eventlog/big_log.py).
PARALLEL_BYTES = 32 * 2**20


def read_log(path: Path) -> LogContents:
    """Read and verify a whole log. Raises CorruptLog for damage before the tail."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return LogContents(path=path, events=[], line_hashes=LineHashes(), good_bytes=0)
    if size >= PARALLEL_BYTES and len(os.sched_getaffinity(0)) >= 2:
        contents = read_intact_in_parallel(path, size)
        if contents is not None:
            return contents
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return LogContents(path=path, events=[], line_hashes=LineHashes(), good_bytes=0)
    return parse_log(data, path)


# The last whole log this process read, by what the file was then (inode, size, modification and change times): a
# command that reads a log without a usable snapshot as a reader (is the run's kept config in force?) and then opens it
# as its writer decodes and verifies it once, not twice (at 1M events, 1.8 s each). Any write to the file changes its
# change time, which no one can set back, so a file that still has the key holds the bytes that were verified. Events
# are immutable; each caller folds them into a replayer of its own. Only a big log is kept: the kernel stamps those
# times at a clock tick's granularity (milliseconds), and reading a big log takes longer than a tick, so a write after
# the read is always seen as one; a small log is quicker to read again than to reason about.
_last_whole: tuple[tuple, LogContents] | None = None


def read_whole_log(path: Path) -> LogContents:
    """`read_log(path)`, or what this process last read of it whole when the file has not changed since."""
    global _last_whole
    try:
        stat = path.stat()
    except FileNotFoundError:
        return read_log(path)
    if stat.st_size < PARALLEL_BYTES:
        return read_log(path)
    key = (str(path), stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)
    if _last_whole is None or _last_whole[0] != key:
        _last_whole = None  # the old contents go before the new ones are read: never two big logs in memory
        _last_whole = (key, read_log(path))
    return _last_whole[1]


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
        self.lock_path = lock_path
        self._lock_fd: int | None = _locked(lock_path, path)
        try:
            self.contents = (read_log_after(path, after) if after is not None else None) or read_whole_log(path)
            if self.contents.chain_breaks:
                first = self.contents.chain_breaks[0]
                raise CorruptLog(
                    f"{path}:{first.line}: hash chain broken at seq {first.seq}: {first.message}; run `rc1 audit`"
                )
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
        stamped = msgspec.structs.replace(
            event, seq=self._next_seq, ts=now_iso(), run=self.run, v=SCHEMA_VERSION, prev=self._head
        )
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
                raise DiskFull(
                    f"{self.path}: no space to append an event ({os.strerror(e.errno)}); {free / 2**20:.1f} MiB "
                    f"free on the filesystem of {self.path.parent}; the partial line was cut off, so the log "
                    "ends at its last whole event: free space, then rc1 advance resumes"
                ) from None
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

    def forget(self) -> None:
        """Remove the lock file of a run that has no log (its command appended nothing), while holding it: a writer
        that opened the file before it went finds, once it holds the lock, that the path is no longer its file
        (`_locked`), and takes the new one."""
        if self._lock_fd is not None and not self.path.exists():
            self.lock_path.unlink(missing_ok=True)

    def __enter__(self) -> EventLog:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _locked(lock_path: Path, path: Path) -> int:
    """The lock file, opened and held (an exclusive flock, never waited for: LogBusy). A lock file removed by the
    command that held it (`EventLog.forget`) while this one was opening it is not the path's file any more: open
    the path again."""
    while True:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            os.close(fd)
            if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise LogBusy(
                    f"{path}: another rc1 process is writing this run (lock {lock_path} is held); wait for it or stop "
                    "it"
                ) from None
            raise
        try:
            same = os.stat(lock_path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fd
        os.close(fd)
