"""`rc1 audit`: exit 0 only when every check over the log and its checkpoints holds."""

from __future__ import annotations

import sys

import msgspec

from rc1.commands._run_config import config_of
from rc1.errors import ExitCode
from rc1.events.audit import audit_log
from rc1.fingerprints import current_fingerprints
from rc1.workspace import Workspace


def run(args) -> int:
    loaded = config_of(args)
    ws = Workspace.here(loaded.config.run.name)
    if not ws.log_path.exists():
        print(f"error: {ws.log_path}: no event log for run {ws.run!r}", file=sys.stderr)
        return int(ExitCode.BAD_INPUT)
    report = audit_log(ws, current_fingerprints(ws, loaded))
    if args.json:
        print(msgspec.json.format(msgspec.json.encode({**msgspec.to_builtins(report), "ok": report.ok})).decode())
    else:
        print(f"audit of {report.log}: {report.events} events, checks: {', '.join(report.checks_run)}")
        for f in report.findings:
            where = f"seq {f.seq}" if f.seq is not None else "log"
            print(f"  FAIL [{f.check}] {where}: {f.message}")
        for f in report.set_aside:
            print(f"  note [{f.check}] seq {f.seq}: {f.message} (by `rc1 repair`)")
        print("audit passed" if report.ok else f"audit FAILED: {len(report.findings)} finding(s)")
    return 0 if report.ok else int(ExitCode.GATE_CLOSED)
