"""`rc1 audit`: exit 0 only when every check over the log and its checkpoints holds."""

from __future__ import annotations

import argparse
import sys

import msgspec

from rc1.app.base_check import audit_bases
from rc1.cli.args import config_args, config_for_reading
from rc1.core.errors import ExitCode
from rc1.core.workspace import Workspace
from rc1.data.fingerprints import current_fingerprints
from rc1.eventlog.audit import audit_log

HELP = "verify chain, transitions, steps, checkpoints and gate inputs"


def arguments(parser: argparse.ArgumentParser) -> None:
    config_args(parser)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--rescore",
        action="store_true",
        help="also derive the rewards again from the rollout archive and the release verdicts from the "
        "gate-set evaluations; every mismatch is a finding",
    )
    parser.add_argument(
        "--sample",
        type=int,
        metavar="N",
        help="--rescore: completions to score again (default: all of a run of up to 5,000, else 1,000 drawn at random)",
    )
    parser.add_argument(
        "--rejudge",
        action="store_true",
        help="--rescore: ask the judge again about each judged completion (paid calls, in the ledger)",
    )
    parser.add_argument(
        "--seed",
        dest="sample_seed",
        type=int,
        default=0,
        metavar="S",
        help="--rescore: the seed of that draw (default 0)",
    )


def run(args) -> int:
    loaded = config_for_reading(args)
    ws = Workspace.here(loaded.config.run.name)
    if not ws.log_path.exists():
        print(f"error: {ws.log_path}: no event log for run {ws.run!r}", file=sys.stderr)
        return int(ExitCode.BAD_INPUT)
    report = audit_log(ws, current_fingerprints(ws, loaded))
    moved, unchecked = audit_bases(ws, loaded)
    report.findings += moved
    report.notes += unchecked
    report.checks_run.append("frozen_base")
    rescored = None
    if args.rescore or args.rejudge:
        from rc1.app.rescore import rescore
        from rc1.eventlog.log import read_log

        rescored = rescore(ws, loaded, read_log(ws.log_path).events, args.sample, args.sample_seed, args.rejudge)
        report.findings += rescored.findings
        report.checks_run.append("rescore")
    if args.json:
        document = {**msgspec.to_builtins(report), "ok": report.ok}
        if rescored is not None:
            document["rescore"] = msgspec.to_builtins(msgspec.structs.replace(rescored, findings=[]))
        print(msgspec.json.format(msgspec.json.encode(document)).decode())
    else:
        print(f"audit of {report.log}: {report.events} events, checks: {', '.join(report.checks_run)}")
        if rescored is not None:
            print(
                f"  rescore: {rescored.completions} archived completions, {rescored.rescored} scored again, "
                f"{rescored.steps} training steps' rewards and {rescored.verdicts} release verdict(s) compared, "
                f"in {rescored.seconds:.1f} s"
            )
            if rescored.replayed or rescored.not_replayed:
                print(
                    f"  rescore: {rescored.replayed} live episodes' tool calls run again; {rescored.not_replayed} of "
                    "items no data file holds (fresh items) read again without running their tools"
                )
            if rescored.judged or rescored.judge_unverifiable:
                print(
                    f"  rescore: {rescored.judged} judge components derived again from the judge cache; "
                    f"{rescored.judge_unverifiable} not re-derivable (their answers are not cached: scorer.cache)"
                )
            if rescored.rejudged:
                print(f"  rescore: {rescored.rejudged} judge components asked of the judge again (--rejudge)")
        for f in report.findings:
            where = f"seq {f.seq}" if f.seq is not None else "log"
            print(f"  FAIL [{f.check}] {where}: {f.message}")
        for f in report.set_aside:
            print(f"  note [{f.check}] seq {f.seq}: {f.message} (by `rc1 repair`)")
        for f in report.notes:
            print(f"  note [{f.check}] seq {f.seq}: {f.message}")
        print("audit passed" if report.ok else f"audit FAILED: {len(report.findings)} finding(s)")
    return 0 if report.ok else int(ExitCode.GATE_CLOSED)
