"""Warnings and library log records of a writing command, rendered by structlog into logs/train.log beside
the lines rendered from events.

Python warnings (`warnings.warn`, through `logging.captureWarnings`) and records of WARNING and above from
the libraries rc1 drives (transformers, trl, peft, datasets, accelerate, torch, …) become one line each:
`ts='…' event='library' level='warning' logger='…' message='…'`. They carry no seq: they are not events, and
no decision reads them. When the views are rebuilt from the log they are kept, merged by time.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable

import structlog

# transformers keeps its records to itself (its root logger does not propagate): listen there as well.
_NON_PROPAGATING = ("transformers",)
_RENDER = structlog.processors.KeyValueRenderer(key_order=["ts", "event", "level", "logger", "message"])


def library_line(record: logging.LogRecord) -> str:
    ts = dt.datetime.fromtimestamp(record.created, dt.timezone.utc).isoformat(timespec="microseconds")
    message = record.getMessage()
    if record.name == "py.warnings":  # "file:line: Category: text\n  source line\n": the first line says it
        message = message.strip().splitlines()[0] if message.strip() else message
    return _RENDER(
        None,
        "",
        {"ts": ts, "event": "library", "level": record.levelname.lower(), "logger": record.name, "message": message},
    )


def is_library_line(line: str) -> bool:
    return " event='library' " in line[:60]


def line_ts(line: str) -> str:
    """The ts of a train.log line (every line begins with it)."""
    return line[4 : line.find("'", 4)] if line.startswith("ts='") else ""


class LibraryOutput(logging.Handler):
    """Installed for the life of a writing session; each record goes to `write` as one rendered line."""

    def __init__(self, write: Callable[[str], None]):
        super().__init__(level=logging.WARNING)
        self._write = write
        self._captured_warnings = False
        self._last: logging.LogRecord | None = None

    def install(self) -> LibraryOutput:
        self._captured_warnings = True
        logging.captureWarnings(True)
        for name in ("", *_NON_PROPAGATING):
            logging.getLogger(name).addHandler(self)
        if logging.getLogger().level > logging.WARNING:
            logging.getLogger().setLevel(logging.WARNING)
        return self

    def uninstall(self) -> None:
        for name in ("", *_NON_PROPAGATING):
            logging.getLogger(name).removeHandler(self)
        if self._captured_warnings:
            logging.captureWarnings(False)

    def emit(self, record: logging.LogRecord) -> None:
        if record is self._last:  # seen on transformers' logger, then again on the root it propagated to
            return
        self._last = record
        try:
            self._write(library_line(record))
        except Exception:  # a log line must never take the run down
            self.handleError(record)
