"""reports/ERROR_<ts>.json: the trace and the last 200 log lines of a failed command."""

from __future__ import annotations

import datetime as dt
import json
import traceback
from collections import deque
from pathlib import Path

from rc1.fsutil import atomic_write_text

TAIL_LINES = 200


def write_error_report(error: BaseException, root: Path | None = None, step: int | None = None) -> Path:
    root = root or Path.cwd()
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    path = root / "reports" / f"ERROR_{stamp}.json"
    train_log = root / "logs" / "train.log"
    tail: list[str] = []
    if train_log.exists():
        with open(train_log, encoding="utf-8", errors="replace") as fh:
            tail = [line.rstrip("\n") for line in deque(fh, maxlen=TAIL_LINES)]
    report = {
        "error": f"{type(error).__name__}: {error}",
        "step": step,
        "trace": traceback.format_exception(error),
        "log_tail": tail,
    }
    atomic_write_text(path, json.dumps(report, indent=2))
    return path.relative_to(root)
