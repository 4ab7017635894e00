"""Reading a big log on two cores: this process decodes it in chunks while a second one hashes its lines.

A full verification decodes every line (msgspec, one core) and hashes every line (hashlib keeps the GIL for
lines this short, so threads would not help). The two are independent, so `rc1/eventlog/line_digests.py` runs
as a process of its own beside the decode. Only an intact log comes back from here: on any decode error,
reshaped older line, chain break or failure of the hashing process the caller reads the log line by line
(rc1/eventlog/lines.py), which names the damage.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import msgspec

from rc1.eventlog.line_digests import line_digests
from rc1.eventlog.lines import EVENT_DECODER, LineHashes, LogContents, chain_intact, has_older_shapes, refuse_newer
from rc1.run.events import Event

CHUNK = 4 * 2**20  # bytes read, then decoded while still in cache


def read_intact_in_parallel(path: Path, size: int) -> LogContents | None:
    """A big log, decoded here in chunks while a second process hashes its lines. Only an intact log is
    returned; None otherwise (see the module's docstring)."""
    hashing = _HashingProcess.start(path, size)
    if hashing is None:
        return None
    try:
        decoded = _decode_in_chunks(path)
        if decoded is None:
            return None
        events, good_bytes, last_line_start, torn = decoded
        refuse_newer(events, path, 1)
        hashes = hashing.result(path, good_bytes)
        if hashes is None or len(hashes) < len(events) or not chain_intact(events, hashes):
            return None
        return LogContents(
            path=path,
            events=events,
            line_hashes=LineHashes(hashes.hex[: 64 * len(events)]),
            good_bytes=good_bytes,
            torn=torn,
            last_line_start=last_line_start,
        )
    finally:
        hashing.stop()


def _decode_in_chunks(path: Path) -> tuple[list[Event], int, int, bytes] | None:
    """(events, where the whole lines end, where the last begins, the bytes after it) read through one reused
    buffer, so the decode works on bytes still in cache; None when any line does not decode."""
    buffer = bytearray(2 * CHUNK)
    view = memoryview(buffer)
    events: list[Event] = []
    held = offset = last_line_start = 0  # bytes in the buffer; file offset of the buffer's start
    with open(path, "rb", buffering=0) as fh:
        while True:
            if held == len(buffer):  # one line longer than the buffer: make room
                buffer.extend(bytes(len(buffer)))
                view.release()
                view = memoryview(buffer)
            count = fh.readinto(view[held : min(len(buffer), held + CHUNK)])
            if not count:
                view.release()
                return events, offset, last_line_start, bytes(buffer[:held])
            held += count
            end = buffer.rfind(b"\n", 0, held) + 1
            if not end:
                continue
            try:
                decoded = EVENT_DECODER.decode_lines(view[:end])
            except (msgspec.DecodeError, msgspec.ValidationError):
                decoded = None
            if decoded is None or has_older_shapes(decoded):
                view.release()
                return None
            events.extend(decoded)
            last_line_start = offset + buffer.rfind(b"\n", 0, end - 1) + 1
            buffer[: held - end] = view[end:held]
            held -= end
            offset += end


class _HashingProcess:
    """rc1/eventlog/line_digests.py on the first bytes of a log, running beside this process's decode."""

    def __init__(self, process: subprocess.Popen):
        self._process = process

    @classmethod
    def start(cls, path: Path, size: int) -> _HashingProcess | None:
        script = Path(__file__).with_name("line_digests.py")
        try:
            process = subprocess.Popen(
                [sys.executable, "-S", str(script), str(path), str(size)],
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
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
                hex_digests += line_digests(fh.read(good_bytes - covered)).hex()
        return LineHashes(hex_digests)

    def stop(self) -> None:
        if self._process.poll() is None:
            self._process.kill()
            self._process.wait()
        if self._process.stdout is not None:
            self._process.stdout.close()
