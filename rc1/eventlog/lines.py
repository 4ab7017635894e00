"""A log's lines, decoded and chain-checked: what every reader of a log (rc1/eventlog/log.py) is built on.

The complete lines are decoded in bulk and the tail on its own: a last line without a newline, or one that
does not decode, is a torn tail (repairable); anything undecodable before it is corruption. A line of an
older schema whose type was reshaped since is read through the upcasters (rc1/run/events.py); a line a
newer rc1 wrote is refused, never taken for a torn tail.
"""

from __future__ import annotations

import hashlib
import itertools
import operator
from collections.abc import Sequence
from pathlib import Path

import msgspec

from rc1.core.errors import CorruptLog, WrittenByNewerRc1
from rc1.eventlog.line_digests import line_digests
from rc1.run.events import (
    EVENT_TYPES,
    GENESIS_HASH,
    SCHEMA_VERSION,
    UPCASTERS,
    AnyEvent,
    Event,
    needs_upcast,
    upcast,
)

EVENT_DECODER = msgspec.json.Decoder(AnyEvent)
_RAW_DECODER = msgspec.json.Decoder()


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
        return self.hex[64 * index : 64 * index + 64]


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
            return Anchor(
                seq=self.events[-1].seq, hash=self.line_hashes[-1], line_start=self.last_line_start, end=self.good_bytes
            )
        return self.base


def _decode_line(line: bytes) -> Event:
    try:
        event = EVENT_DECODER.decode(line)
        if event.v >= SCHEMA_VERSION or not needs_upcast(event):
            return event
        raw = _RAW_DECODER.decode(line)  # an older shape that still decodes: read it through the upcasters
        return msgspec.convert(upcast(raw), AnyEvent)
    except msgspec.ValidationError:
        raw = _RAW_DECODER.decode(line)
        if not isinstance(raw, dict):
            raise
        version, kind = raw.get("v", SCHEMA_VERSION), raw.get("type")
        enveloped = (
            isinstance(raw.get("seq"), int) and isinstance(raw.get("prev"), str) and isinstance(raw.get("run"), str)
        )
        if enveloped and (
            (isinstance(version, int) and version > SCHEMA_VERSION)
            or (isinstance(kind, str) and kind not in EVENT_TYPES)
        ):
            raise WrittenByNewerRc1(
                f"event type {kind!r}, schema v{version} (this rc1 reads up to v{SCHEMA_VERSION})"
            ) from None
        if version >= SCHEMA_VERSION:
            raise
        return msgspec.convert(upcast(raw), AnyEvent)


def parse_log(data: bytes, path: Path, *, base: Anchor | None = None) -> LogContents:
    """The lines of `data` (a whole log, or the bytes after `base`), decoded and chain-checked."""
    first_seq, prev = (base.seq + 1, base.hash) if base else (0, GENESIS_HASH)
    first_line, offset = first_seq + 1, base.end if base else 0
    end = data.rfind(b"\n") + 1
    body, torn = data[:end], data[end:]
    try:
        events = EVENT_DECODER.decode_lines(body)
        if has_older_shapes(events):
            raise _OlderShapes
    except (msgspec.DecodeError, msgspec.ValidationError, _OlderShapes):
        events = []
        lines = body.split(b"\n")[:-1]
        start = 0
        for index, line in enumerate(lines):
            try:
                events.append(_decode_line(line))
            except WrittenByNewerRc1 as e:  # a whole line, newline included: not torn, just not ours to read
                raise WrittenByNewerRc1(
                    f"{path}:{first_line + index}: {e} was written by a newer rc1: upgrade rc1 "
                    "to read this log (nothing was changed)"
                ) from None
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
    refuse_newer(events, path, first_line)
    hashes = LineHashes(line_digests(body).hex())
    last_line_start = body.rfind(b"\n", 0, len(body) - 1) + 1 if body else 0
    return LogContents(
        path=path,
        events=events,
        line_hashes=hashes,
        good_bytes=offset + len(body),
        torn=torn,
        chain_breaks=chain_breaks(events, hashes, first_seq, prev, first_line),
        last_line_start=offset + last_line_start if body else (base.line_start if base else 0),
        base=base,
    )


class _OlderShapes(Exception):
    """Lines of an older schema whose type has changed shape since: decoded one by one, through the upcasters."""


_VERSION = operator.attrgetter("v")


# The event classes some older version wrote in another shape: only their lines can need the upcasters.
_RESHAPED = frozenset(EVENT_TYPES[kind] for kind, _ in UPCASTERS)


def has_older_shapes(events: list[Event]) -> bool:
    if min(map(_VERSION, events), default=SCHEMA_VERSION) == SCHEMA_VERSION:
        return False
    return any(map(_RESHAPED.__contains__, map(type, events))) and any(map(needs_upcast, events))


def refuse_newer(events: list[Event], path: Path, first_line: int) -> None:
    if max(map(_VERSION, events), default=SCHEMA_VERSION) <= SCHEMA_VERSION:
        return
    newer = next((i for i, event in enumerate(events) if event.v > SCHEMA_VERSION), None)
    if newer is not None:  # a known type that still decoded: its version says a newer rc1 wrote it
        event = events[newer]
        raise WrittenByNewerRc1(
            f"{path}:{first_line + newer}: event type {type(event).__struct_config__.tag!r}, schema "
            f"v{event.v} (this rc1 reads up to v{SCHEMA_VERSION}) was written by a newer rc1: "
            "upgrade rc1 to read this log (nothing was changed)"
        )


def chain_intact(events: list[Event], hashes: LineHashes, first_seq: int = 0, prev: str = GENESIS_HASH) -> bool:
    """Whether the chain holds, in a few C-level passes: the seqs count up by one from first_seq, every prev is
    one 64-digit hash, and the prevs after the first, joined, begin the joined line hashes (the first prev is
    `prev`). A million lines take ~0.25 s; `chain_breaks` names the breaks when there are any."""
    if not events:
        return True
    later = [event.prev for event in events[1:]]
    return (
        all(map(operator.eq, map(_SEQ, events), itertools.count(first_seq)))
        and events[0].prev == prev
        and set(map(len, later)) <= {64}  # else shifted boundaries could join to the same string
        and hashes.hex.startswith("".join(later))
    )


def chain_breaks(
    events: list[Event], hashes: LineHashes, first_seq: int = 0, prev: str = GENESIS_HASH, first_line: int = 1
) -> list[ChainBreak]:
    """Every seq out of order and every prev that is not the hash of the line before it ([] when intact)."""
    if chain_intact(events, hashes, first_seq, prev):
        return []
    breaks = []
    expected_prev = prev
    for index, event in enumerate(events):
        line, wanted = first_line + index, first_seq + index
        if event.seq != wanted:
            breaks.append(
                ChainBreak(
                    line, event.seq, f"seq {event.seq} where {wanted} was expected (gap, duplicate or reordering)"
                )
            )
        if event.prev != expected_prev:
            breaks.append(
                ChainBreak(
                    line, event.seq, "prev hash does not match the previous line (edited, deleted or reordered line)"
                )
            )
        expected_prev = hashes[index]
    return breaks


_SEQ = operator.attrgetter("seq")
