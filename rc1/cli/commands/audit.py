"""`rc1 audit`: exit 0 only when every check over the log and its checkpoints holds."""

from __future__ import annotations

import argparse
import sys

import msgspec

from rc1.app.base_check import audit_bases
from rc1.cli.args import config_args, config_for_reading
from rc1.core import distributed
from rc1.core.errors import BadInput, ExitCode
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
        help="--rescore: the seed of that draw (default 0); --retrain all: of the checkpoints drawn",
    )
    parser.add_argument(
        "--retrain",
        metavar="CHECKPOINT",
        help="also train CHECKPOINT (its folder, or step_N where one line has it; `all`: a sample of the run's) again "
        "from the checkpoint before it and compare every step with its train_step and the weights, optimizer and "
        "RNG state with the checkpoint: bit for bit where the line recorded exact_resume. Under torchrun, on as many "
        "processes as the line was trained on",
    )
    parser.add_argument(
        "--from",
        dest="retrain_from",
        metavar="CHECKPOINT",
        help="--retrain: the checkpoint to retrain from (default: the line's one before; step_0: the line's base)",
    )
    parser.add_argument(
        "--retrain-sample",
        type=int,
        default=3,
        metavar="K",
        help="--retrain all: how many of the run's checkpoints to retrain, drawn with --seed (default %(default)s)",
    )


def run(args) -> int:
    if args.retrain is None:
        distributed.require_single_process("audit")  # only a retrain runs under a launch, on the line's processes
    elif args.retrain_from is not None and args.retrain == "all":
        raise BadInput("--from: a retrain of `all` starts each checkpoint from the one before it; name one checkpoint")
    elif args.retrain_sample < 1:
        raise BadInput(f"--retrain-sample {args.retrain_sample}: retrain at least one checkpoint")
    loaded = config_for_reading(args)
    ws = Workspace.here(loaded.config.run.name)
    if not ws.log_path.exists():
        print(f"error: {ws.log_path}: no event log for run {ws.run!r}", file=sys.stderr)
        return int(ExitCode.BAD_INPUT)
    if args.retrain is not None:
        distributed.join()
    if not distributed.is_writer():  # a rank of a retrain's launch: it trains its share, rank 0 audits and reports
        _retrain(args, loaded, ws)
        return 0
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
    retrained = _retrain(args, loaded, ws) if args.retrain is not None else []
    for done in retrained:
        report.findings += done.findings
        report.notes += done.notes
    if retrained:
        report.checks_run.append("retrain")
    if args.json:
        _print_json(report, rescored, retrained)
    else:
        _print_text(report, rescored, retrained)
    return 0 if report.ok else int(ExitCode.GATE_CLOSED)


def _print_json(report, rescored, retrained: list) -> None:
    document = {**msgspec.to_builtins(report), "ok": report.ok}
    if rescored is not None:
        document["rescore"] = msgspec.to_builtins(msgspec.structs.replace(rescored, findings=[]))
    if retrained:
        document["retrain"] = [
            {**msgspec.to_builtins(msgspec.structs.replace(r, findings=[], notes=[])), "verified": r.verified}
            for r in retrained
        ]
    print(msgspec.json.format(msgspec.json.encode(document)).decode())


def _print_text(report, rescored, retrained: list) -> None:
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
    for done in retrained:
        print(retrain_summary(done))
    for f in report.findings:
        where = f"seq {f.seq}" if f.seq is not None else "log"
        print(f"  FAIL [{f.check}] {where}: {f.message}")
    for f in report.set_aside:
        print(f"  note [{f.check}] seq {f.seq}: {f.message} (by `rc1 repair`)")
    for f in report.notes:
        print(f"  note [{f.check}] seq {f.seq}: {f.message}")
    print("audit passed" if report.ok else f"audit FAILED: {len(report.findings)} finding(s)")


def _retrain(args, loaded, ws: Workspace) -> list:
    """The retrains `--retrain` asks for, each from the checkpoint before it (or `--from`); their reports on rank 0."""
    import random

    from rc1.app.retrain import retrain
    from rc1.app.retrain_plan import plan_retrain, retrainable
    from rc1.eventlog.log import read_log

    events = read_log(ws.log_path).events
    if args.retrain == "all":
        every = retrainable(events)
        if not every:
            raise BadInput("--retrain all: the log vouches for no checkpoint yet; there is nothing to retrain")
        drawn = set(random.Random(args.sample_seed).sample(every, min(args.retrain_sample, len(every))))
        plans = [plan_retrain(events, folder) for folder in every if folder in drawn]
    else:
        plans = [plan_retrain(events, args.retrain, args.retrain_from)]
    reports = [retrain(loaded, ws, plan) for plan in plans]
    return [r for r in reports if r is not None]


def retrain_summary(report) -> str:
    """One retrain's lines of the audit's text report."""
    steps = report.steps
    if not steps:
        return f"  retrain: {report.target} from {report.start}: not trained again (the finding below says why)"
    span = f"steps {steps[0]}…{steps[-1]}" if len(steps) > 1 else f"step {steps[0]}" if steps else "no step"
    per_step = report.train_seconds / len(steps) if steps else float("nan")
    head = (
        f"  retrain: {report.target} from {report.start}: {span} trained again in {report.seconds:.1f} s "
        f"({per_step:.2f} s/step; the line recorded {report.recorded_sec_per_step:.2f} s/step)"
    )
    compared = ", ".join(
        f"{c.dir} {'equal' if c.same else 'DIFFERS'} ({len(c.equal)} files equal)" for c in report.checkpoints
    )
    if report.verified:
        return f"{head}\n  retrain: every step as recorded; {compared}: re-derived bit for bit"
    if not report.exact:
        return (
            f"{head}\n  retrain: NOT verified: the line did not record an exact resume "
            f"(training_started.exact_resume); what differs is measured below, as notes; {compared}"
        )
    return f"{head}\n  retrain: {compared}"
