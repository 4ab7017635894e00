"""Stage commands for working on one piece: they use the same code the rounds and `advance` use."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from rc1.app import datasets
from rc1.app.artifacts import write_artifact, write_held_out
from rc1.app.checks import run_checks
from rc1.app.gate import record_checks_adhoc, require_allowed
from rc1.app.preflight import pool_checks, round_scoring, run_round1, run_round2
from rc1.app.session import FollowerSession, Session
from rc1.app.shadow_run import run_shadow
from rc1.app.train import run_training
from rc1.checks.result import CheckResult
from rc1.checks.scorer import scorer_live, scorer_probe, scorer_selfcheck
from rc1.checks.spec import RoundInputs, spread
from rc1.cli._run_config import config_of
from rc1.core import distributed
from rc1.core.errors import BadInput, ExitCode
from rc1.data.difficulty import bucket
from rc1.data.task import read_items


def _open(args) -> Session:
    return Session.open(config_of(args), accept_changed_inputs=args.accept_changed_inputs)


def _report(results: list[CheckResult]) -> int:
    for r in results:
        print(f"  {'PASS' if r.passed else 'FAIL'}  {r.name:<18} {r.detail}")
    return 0 if all(r.passed for r in results) else int(ExitCode.GATE_CLOSED)


def _require(path: Path, what: str) -> None:
    if not path.exists():
        raise BadInput(f"{path}: no {what} yet; build it first (`rc1 {what} …` or `rc1 advance`)")


def preflight(args) -> int:
    with _open(args) as session:
        (run_round1 if args.round == 1 else run_round2)(session)
        print(f"round {args.round} passed; state {session.projection.state}")
    return 0


def _before_any_gate(session: Session, what: str) -> None:
    """A gated input is rebuilt only where round 1 may still run (INIT, or after a gate was invalidated): once a
    gate has passed on it, the machine refuses, instead of the gate silently vouching for other bytes."""
    require_allowed(session, "round1_passed", f"{what} (it rewrites a gated input)")


def pool(args) -> int:
    with _open(args) as session:
        ws = session.ws
        if args.action == "build":
            _before_any_gate(session, "pool build")
            items = datasets.build_seed_pool(session.loaded)
            write_artifact(session, ws.pool_path, items, "pool")
            print(f"wrote {len(items)} items to {ws.pool_path}")
            return 0
        _require(ws.pool_path, "pool")
        _require(ws.shadow_path, "shadow")
        results = pool_checks(session, read_items(ws.pool_path), read_items(ws.shadow_path))
        record_checks_adhoc(session, results)
        return _report(results)


def shadow(args) -> int:
    if args.action == "run":
        return _shadow_run(args)
    with _open(args) as session:
        _before_any_gate(session, "shadow materialize")
        held = datasets.build_held_out(session.loaded)
        write_held_out(session, held)
        print(
            f"wrote {len(held.shadow)} items to {session.ws.shadow_path} and {len(held.gate)} to "
            f"{session.ws.gate_path}, each with its manifest"
        )
    return 0


def _shadow_run(args) -> int:
    if args.samples is not None and args.samples < 2:
        raise BadInput(f"--samples {args.samples}: the statistics need at least 2 samples per item")
    if not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", args.tag):
        raise BadInput(f"--tag {args.tag!r}: letters, digits, '_', '.' and '-' only (it names a report file)")
    with _open(args) as session:
        _require(session.ws.shadow_path, "shadow")
        _require(session.ws.balanced_pool_path, "pool")
        event = run_shadow(session, args.tag, args.checkpoint, args.samples)
    print(f"shadow run {event.tag} ({event.checkpoint}, {event.samples} samples per item): report {event.report}")
    for name, value in event.statistics.items():
        print(f"  {name:<20} {'-' if value is None else f'{value:.4f}'}")
    return 0


def difficulty(args) -> int:
    """metrics: per-item metrics of the seed pool; bucketize: the balanced pool; validate: the check and report."""
    with _open(args) as session:
        ws = session.ws
        _require(ws.pool_path, "pool")
        pool_items = read_items(ws.pool_path)
        metrics = datasets.measure_all(pool_items)
        if args.action == "metrics":
            datasets.write_metrics(session.ws, metrics)
            counts = Counter((m.task, bucket(m)) for m in metrics)
            print(f"wrote {len(metrics)} item metrics to {ws.metrics_path}")
            for (task, label), n in sorted(counts.items()):
                print(f"  {task:<11} {label:<7} {n}")
            return 0
        balanced = datasets.balance(session.config, pool_items, metrics)
        if args.action == "bucketize":
            _before_any_gate(session, "difficulty bucketize")
            write_artifact(session, ws.balanced_pool_path, balanced.items, "balanced_pool")
            print(f"wrote {len(balanced.items)} of {len(pool_items)} items to {ws.balanced_pool_path}")
            for task, buckets in balanced.balanced_buckets.items():
                print(f"  {task:<11} " + "  ".join(f"{k} {v}" for k, v in buckets.items()))
            return 0
        inputs = RoundInputs(loaded=session.loaded, ws=ws, pool=pool_items, metrics=metrics, balanced=balanced)
        results = run_checks(inputs, command="difficulty validate")
        record_checks_adhoc(session, results)
        print(f"report: {ws.difficulty_report_path}")
        return _report(results)


def scorer(args) -> int:
    """probe: the rule scorer's self-check, the judge's key and provider, and `--n` real judge calls."""
    if args.n < 1:
        raise BadInput(f"--n {args.n}: probe with at least one item")
    with _open(args) as session:
        _require(session.ws.shadow_path, "shadow")
        shadow = read_items(session.ws.shadow_path)
        scoring = round_scoring(session, 0)
        results = [scorer_selfcheck(shadow, scoring.pipeline.rule), scorer_live(session.config, require_api=args.live)]
        if scoring.judge is not None:
            scoring.judge.ledger.scope = "probe"
            results.append(scorer_probe(scoring.judge, spread(shadow, args.n)))
        record_checks_adhoc(session, results)
        return _report(results)


def train(args) -> int:
    """The next unfinished line of training (`--all`: every one, then the verdict across seeds). Under a multi-process
    launch every rank runs this; rank 0 is the writer, the others follow, and each line's session is opened anew so
    the followers read what rank 0 wrote of the line before."""
    loaded = config_of(args)
    resume = Path(args.resume) if args.resume else None
    distributed.join(args.rank_wait)
    while True:
        opened = (
            Session.open(loaded, accept_changed_inputs=args.accept_changed_inputs)
            if distributed.is_writer()
            else FollowerSession.open(loaded)
        )
        with opened as session:
            distributed.same_log_everywhere(session.head, session.ws.log_path)  # before rank 0 appends anything
            run_training(session, resume)
            more = args.all and not session.projection.complete
        # Rank 0 has closed its session (the log is whole on disk) before the others learn whether to read it again.
        if not distributed.share(more):
            return 0
        resume = None
