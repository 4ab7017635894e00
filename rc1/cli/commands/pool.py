"""`rc1 pool build|validate`: the seed pool alone, built or checked by the code round 1 uses."""

from __future__ import annotations

import argparse

from rc1.cli.args import config_args
from rc1.cli.stage_session import before_any_gate, open_session, print_checks, require_built

HELP = "build or validate the seed pool alone"


def arguments(parser: argparse.ArgumentParser) -> None:
    config_args(parser)
    parser.add_argument("action", choices=("build", "validate"))


def run(args: argparse.Namespace) -> int:
    from rc1.app import datasets
    from rc1.app.artifacts import write_artifact
    from rc1.app.gate import record_checks_adhoc
    from rc1.app.preflight import pool_checks
    from rc1.data.task import read_items

    with open_session(args) as session:
        ws = session.ws
        if args.action == "build":
            before_any_gate(session, "pool build")
            items = datasets.build_seed_pool(session.loaded, ws)
            write_artifact(session, ws.pool_path, items, "pool")
            print(f"wrote {len(items)} items to {ws.pool_path}")
            return 0
        require_built(ws.pool_path, "pool")
        require_built(ws.shadow_path, "shadow")
        results = pool_checks(session, read_items(ws.pool_path), read_items(ws.shadow_path))
        record_checks_adhoc(session, results)
        return print_checks(results)
