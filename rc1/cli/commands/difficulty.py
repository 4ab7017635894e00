"""`rc1 difficulty metrics|bucketize|validate`: per-item metrics of the seed pool, the balanced pool, and the checks
that name this command in the checks table (rc1/app/checks.py), with their report."""

from __future__ import annotations

import argparse
from collections import Counter

from rc1.cli.args import config_args
from rc1.cli.stage_session import before_any_gate, open_session, print_checks, require_built

HELP = "difficulty metrics, balanced pool, validation and report"


def arguments(parser: argparse.ArgumentParser) -> None:
    config_args(parser)
    parser.add_argument("action", choices=("metrics", "bucketize", "validate"))


def run(args: argparse.Namespace) -> int:
    from rc1.app import datasets
    from rc1.app.artifacts import write_artifact
    from rc1.app.checks import run_checks
    from rc1.app.gate import record_checks_adhoc
    from rc1.checks.spec import RoundInputs
    from rc1.data.difficulty import bucket
    from rc1.data.task import read_items
    from rc1.data.task_difficulty import given_tasks

    with open_session(args) as session:
        ws = session.ws
        require_built(ws.pool_path, "pool")
        pool_items = read_items(ws.pool_path)
        metrics = datasets.measure_all(pool_items, session.config.data.pages)
        if args.action == "metrics":
            datasets.write_metrics(session.ws, metrics)
            yours = given_tasks(session.config.data)  # bucketed by the items' own difficulty (yours; generated live)
            counts = Counter(
                (m.task, item.difficulty if m.task in yours else bucket(m)) for item, m in zip(pool_items, metrics)
            )
            print(f"wrote {len(metrics)} item metrics to {ws.metrics_path}")
            for (task, label), n in sorted(counts.items()):
                print(f"  {task:<11} {label:<7} {n}")
            return 0
        balanced = datasets.balance(session.config, pool_items, metrics)
        if args.action == "bucketize":
            before_any_gate(session, "difficulty bucketize")
            write_artifact(session, ws.balanced_pool_path, balanced.items, "balanced_pool")
            print(f"wrote {len(balanced.items)} of {len(pool_items)} items to {ws.balanced_pool_path}")
            for task, buckets in balanced.balanced_buckets.items():
                print(f"  {task:<11} " + "  ".join(f"{k} {v}" for k, v in buckets.items()))
            return 0
        inputs = RoundInputs(loaded=session.loaded, ws=ws, pool=pool_items, metrics=metrics, balanced=balanced)
        results = run_checks(inputs, command="difficulty validate")
        record_checks_adhoc(session, results)
        print(f"report: {ws.difficulty_report_path}")
        return print_checks(results)
