"""events/<run>.ledger.jsonl: one record per judge call, beside the event log.

Records are appended with one O_APPEND write per batch and fsynced, so a crash loses at most the batch
in flight; calls of a step that a crash cut short stay in the ledger, because they were made (and
billed). Events carry the summaries (`ScoringSummary`) of the calls made for a round, step or evaluation.
"""

from __future__ import annotations

import datetime as dt
import os
import threading
from collections import deque
from pathlib import Path

import msgspec
import numpy as np

from rc1.run.events import ScoringSummary


class LedgerRecord(msgspec.Struct, frozen=True, kw_only=True):
    ts: str
    scope: str  # "round1", "round2", "probe", "step 12", "eval 10", "cli"
    provider: str
    model: str
    latency_ms: float
    cached: bool
    billable: bool
    prompt_tokens: int
    completion_tokens: int
    request_sha256: str
    attempts: int
    error: str = ""


_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder(LedgerRecord)


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="microseconds")


class Prices(msgspec.Struct, frozen=True, kw_only=True):
    """USD per million judge tokens (scorer.price_per_million_*_tokens); None: not priced, cost 0."""

    input: float | None = None
    output: float | None = None

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return ((self.input or 0.0) * prompt_tokens + (self.output or 0.0) * completion_tokens) / 1e6


UNPRICED = Prices()  # no prices in the scorer section: every cost 0


class Ledger:
    """Appends records and keeps those since the last `drain` for the next event's summary."""

    def __init__(self, path: Path, prices: Prices = UNPRICED):
        self.path = Path(path)
        self.prices = prices
        self.scope = "cli"
        self._pending: list[LedgerRecord] = []
        self._lock = threading.Lock()

    def append(self, records: list[LedgerRecord]) -> None:
        if not records:
            return
        data = b"".join(_ENCODER.encode(r) + b"\n" for r in records)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            finally:
                os.close(fd)
            self._pending.extend(records)

    def drain(self) -> ScoringSummary:
        with self._lock:
            records, self._pending = self._pending, []
        return summarize(records, self.prices)


def summarize(records: list[LedgerRecord], prices: Prices = UNPRICED) -> ScoringSummary:
    if not records:
        return ScoringSummary()
    latencies = np.array([r.latency_ms for r in records], dtype=float)
    prompt_tokens = sum(r.prompt_tokens for r in records if r.billable)
    completion_tokens = sum(r.completion_tokens for r in records if r.billable)
    return ScoringSummary(
        calls=len(records),
        cache_hits=sum(r.cached for r in records),
        billable=sum(r.billable for r in records),
        errors=sum(bool(r.error) for r in records),
        latency_p50_ms=float(np.percentile(latencies, 50)),
        latency_p95_ms=float(np.percentile(latencies, 95)),
        # What the provider billed: a cache hit's tokens were paid for once, by the call it repeats.
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        cost_usd=prices.cost(prompt_tokens, completion_tokens),
    )


def read_tail(path: Path, n: int | None) -> list[LedgerRecord]:
    """The last `n` complete records (None: all of them; a torn last line, from a crash mid-write, is left out)."""
    if not Path(path).exists():
        return []
    tail: deque[LedgerRecord] = deque(maxlen=n)
    with open(path, "rb") as fh:
        for line in fh:
            if line.endswith(b"\n"):
                try:
                    tail.append(_DECODER.decode(line))
                except msgspec.DecodeError:
                    continue  # a torn line; the ledger is an account of calls, not a source of state
    return list(tail)
