"""What a failed command leaves: reports/ERROR_<ts>.json (the trace and the last 200 log lines) and, on a FATAL
error, reports/FAIL_<ts>.tar.gz (the failpack: logs, reports, configs, the event log and the judge ledger)."""

from __future__ import annotations

import datetime as dt
import json
import tarfile
import traceback
from collections import deque
from pathlib import Path

from rc1.core.fsutil import atomic_write_text
from rc1.core.workspace import DEFAULT_RUN, Workspace

TAIL_LINES = 200


def write_error_report(error: BaseException, ws: Workspace | None = None, step: int | None = None) -> Path | None:
    """ERROR_<ts>.json in the run's reports (the default run's when no run is known), relative to the workspace
    root; None when it cannot be written (a full disk): the error itself must still be reported."""
    try:
        return _write_error_report(error, ws or Workspace(root=Path.cwd(), run=DEFAULT_RUN), step)
    except OSError:
        return None


def _write_error_report(error: BaseException, ws: Workspace, step: int | None) -> Path:
    root = ws.root
    path = ws.reports_dir / f"ERROR_{utc_stamp()}.json"
    train_log = ws.train_log_path
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


def packed_folders(ws: Workspace) -> list[Path]:
    """The workspace folders a failpack of the run holds: its logs and reports, the configs, the event logs."""
    return [ws.logs_dir, ws.reports_dir, ws.root / "configs", ws.events_dir]


def write_failpack(ws: Workspace, out: Path, config_path: Path | None = None) -> Path:
    """One .tar.gz of the run's logs, reports, configs and events (log and ledger; not the lock), written to a
    temporary name and renamed. A config from outside `configs/` is added as configs/used/<name>."""
    root = ws.root
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    try:
        with tarfile.open(tmp, "w:gz") as tar:
            for folder in packed_folders(ws):
                if folder.exists():
                    tar.add(
                        folder,
                        arcname=str(folder.relative_to(root)),
                        filter=lambda info: (
                            None if info.name.endswith(".tar.gz") or info.name.endswith(".lock") else info
                        ),
                    )
            if (
                config_path is not None
                and config_path.is_file()
                and config_path.resolve().parent != (root / "configs").resolve()
            ):
                tar.add(config_path, arcname=f"configs/used/{config_path.name}")
        tmp.replace(out)
    except BaseException:
        tmp.unlink(missing_ok=True)  # a partial pack on a full disk would hold its last free space
        raise
    return out


def utc_stamp() -> str:
    """A file name's timestamp: 20261123T181525123456Z."""
    return dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")


def write_fatal_failpack(ws: Workspace | None = None, config_path: Path | None = None) -> Path | None:
    """The failpack a FATAL error writes by itself (the seed's error trap): FAIL_<ts>.tar.gz in the run's reports.
    None when it cannot be written (the disk that failed may be this one): the FATAL message must still get out."""
    ws = ws or Workspace(root=Path.cwd(), run=DEFAULT_RUN)
    try:
        return write_failpack(ws, ws.reports_dir / f"FAIL_{utc_stamp()}.tar.gz", config_path).relative_to(ws.root)
    except OSError:
        return None
