"""What a failed command leaves: reports/ERROR_<ts>.json (the trace and the last 200 log lines) and, on a FATAL
error, reports/FAIL_<ts>.tar.gz (the failpack: logs, reports, configs, the event log and the judge ledger)."""

from __future__ import annotations

import datetime as dt
import json
import tarfile
import traceback
from collections import deque
from pathlib import Path

from rc1.fsutil import atomic_write_text

TAIL_LINES = 200


def write_error_report(error: BaseException, root: Path | None = None, step: int | None = None) -> Path | None:
    """reports/ERROR_<ts>.json, relative to `root`; None when it cannot be written (a full disk): the error
    itself must still be reported."""
    try:
        return _write_error_report(error, root, step)
    except OSError:
        return None


def _write_error_report(error: BaseException, root: Path | None, step: int | None) -> Path:
    root = root or Path.cwd()
    path = root / "reports" / f"ERROR_{utc_stamp()}.json"
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


PACKED = ("logs", "reports", "configs", "events")  # the workspace folders a failpack holds


def write_failpack(root: Path, out: Path, config_path: Path | None = None) -> Path:
    """One .tar.gz of the run's logs, reports, configs and events (log and ledger; not the lock), written to a
    temporary name and renamed. A config from outside `configs/` is added as configs/used/<name>."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    try:
        with tarfile.open(tmp, "w:gz") as tar:
            for name in PACKED:
                if (root / name).exists():
                    tar.add(root / name, arcname=name,
                            filter=lambda info: None if info.name.endswith(".tar.gz") or info.name.endswith(".lock") else info)
            if config_path is not None and config_path.is_file() and config_path.resolve().parent != (root / "configs").resolve():
                tar.add(config_path, arcname=f"configs/used/{config_path.name}")
        tmp.replace(out)
    except BaseException:
        tmp.unlink(missing_ok=True)  # a partial pack on a full disk would hold its last free space
        raise
    return out


def utc_stamp() -> str:
    """A file name's timestamp: 20261123T181525123456Z."""
    return dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")


def write_fatal_failpack(root: Path | None = None, config_path: Path | None = None) -> Path | None:
    """The failpack a FATAL error writes by itself (the seed's error trap): reports/FAIL_<ts>.tar.gz. None when
    it cannot be written (the disk that failed may be this one): the FATAL message must still get out."""
    root = root or Path.cwd()
    try:
        return write_failpack(root, root / "reports" / f"FAIL_{utc_stamp()}.tar.gz", config_path).relative_to(root)
    except OSError:
        return None
