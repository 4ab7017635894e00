"""Stage commands for working on one piece: they use the same code the rounds and `advance` use."""

from __future__ import annotations

from pathlib import Path

from rc1.checks.result import CheckResult
from rc1.checks.scorer import scorer_selfcheck
from rc1.config import load_config
from rc1.data.task import read_items
from rc1.errors import BadInput, ExitCode
from rc1.session import Session
from rc1.stages.artifacts import write_artifact
from rc1.stages.gate import record_checks_adhoc
from rc1.stages.preflight import build_pool, build_shadow, data_checks, run_round1, run_round2
from rc1.stages.train import run_training


def _open(args) -> Session:
    return Session.open(load_config(args.config, args.overrides))


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


def pool(args) -> int:
    with _open(args) as session:
        ws = session.ws
        if args.action == "build":
            items = build_pool(session)
            write_artifact(session, ws.pool_path, items, "pool")
            print(f"wrote {len(items)} items to {ws.pool_path}")
            return 0
        _require(ws.pool_path, "pool")
        _require(ws.shadow_path, "shadow")
        results = data_checks(session, read_items(ws.pool_path), read_items(ws.shadow_path))
        record_checks_adhoc(session, results)
        return _report(results)


def shadow(args) -> int:
    with _open(args) as session:
        items = build_shadow(session)
        write_artifact(session, session.ws.shadow_path, items, "shadow")
        print(f"wrote {len(items)} items to {session.ws.shadow_path}")
    return 0


def scorer(args) -> int:
    with _open(args) as session:
        _require(session.ws.shadow_path, "shadow")
        results = [scorer_selfcheck(read_items(session.ws.shadow_path))]
        record_checks_adhoc(session, results)
        return _report(results)


def train(args) -> int:
    with _open(args) as session:
        run_training(session, Path(args.resume) if args.resume else None)
    return 0
