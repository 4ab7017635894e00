"""`rc1 preflight --round 1|2`: one preflight round, the same the machine runs in `rc1 advance`."""

from __future__ import annotations

import argparse

from rc1.cli.args import config_args
from rc1.cli.stage_session import open_session

HELP = "run one preflight round"


def arguments(parser: argparse.ArgumentParser) -> None:
    config_args(parser)
    parser.add_argument("--round", type=int, choices=(1, 2), required=True)


def run(args: argparse.Namespace) -> int:
    from rc1.app.preflight import run_round1, run_round2

    with open_session(args) as session:
        (run_round1 if args.round == 1 else run_round2)(session)
        print(f"round {args.round} passed; state {session.projection.state}")
    return 0
