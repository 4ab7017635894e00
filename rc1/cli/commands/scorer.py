"""`rc1 scorer probe`: the rule scorer's self-check, the judge's key and provider, and `--n` real judge calls."""

from __future__ import annotations

import argparse

from rc1.cli.args import config_args
from rc1.cli.stage_session import open_session, print_checks, require_built
from rc1.core.errors import BadInput

HELP = "probe the scorer: rule self-check, judge key and provider, real judge calls"


def arguments(parser: argparse.ArgumentParser) -> None:
    config_args(parser)
    parser.add_argument("action", choices=("probe",))
    parser.add_argument("--n", type=int, default=8, help="shadow items to send to the judge (default 8)")
    parser.add_argument("--live", action="store_true", help="fail unless a live API judge is configured")


def run(args: argparse.Namespace) -> int:
    if args.n < 1:
        raise BadInput(f"--n {args.n}: probe with at least one item")
    from rc1.app.gate import record_checks_adhoc
    from rc1.app.preflight import round_scoring
    from rc1.checks.scorer import scorer_live, scorer_probe, scorer_selfcheck
    from rc1.checks.spec import spread
    from rc1.data.task import read_items

    with open_session(args) as session:
        require_built(session.ws.shadow_path, "shadow")
        shadow = read_items(session.ws.shadow_path)
        scoring = round_scoring(session, 0)
        results = [scorer_selfcheck(shadow, scoring.pipeline.rule), scorer_live(session.config, require_api=args.live)]
        if scoring.judge is not None:
            scoring.judge.ledger.scope = "probe"
            results.append(scorer_probe(scoring.judge, spread(shadow, args.n)))
        record_checks_adhoc(session, results)
        return print_checks(results)
