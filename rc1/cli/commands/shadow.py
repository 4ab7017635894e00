"""`rc1 shadow materialize|run`: the held-out sets written, or a policy run on the shadow set (a shadow run)."""

from __future__ import annotations

import argparse
import re

from rc1.cli.args import config_args
from rc1.cli.stage_session import before_any_gate, open_session, require_built
from rc1.core.errors import BadInput

HELP = (
    "materialize the held-out sets (the shadow eval set and the release gate set), "
    "or run a policy on the shadow set (shadow run)"
)


def arguments(parser: argparse.ArgumentParser) -> None:
    config_args(parser)
    parser.add_argument("action", choices=("materialize", "run"))
    parser.add_argument("--tag", default="manual", help="run: names reports/shadow_run_<tag>.json (default manual)")
    parser.add_argument("--checkpoint", default="base", help="run: base | best | step_N (default base)")
    parser.add_argument("--samples", type=int, help="run: sampled replies per item (default shadow.samples)")


def run(args: argparse.Namespace) -> int:
    if args.action == "run":
        return _shadow_run(args)
    from rc1.app import datasets
    from rc1.app.artifacts import write_held_out

    with open_session(args) as session:
        before_any_gate(session, "shadow materialize")
        held = datasets.build_held_out(session.loaded, session.ws)
        write_held_out(session, held)
        print(
            f"wrote {len(held.shadow)} items to {session.ws.shadow_path} and {len(held.gate)} to "
            f"{session.ws.gate_path}, each with its manifest"
        )
    return 0


def _shadow_run(args: argparse.Namespace) -> int:
    if args.samples is not None and args.samples < 2:
        raise BadInput(f"--samples {args.samples}: the statistics need at least 2 samples per item")
    if not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", args.tag):
        raise BadInput(f"--tag {args.tag!r}: letters, digits, '_', '.' and '-' only (it names a report file)")
    from rc1.app.shadow_run import run_shadow

    with open_session(args) as session:
        require_built(session.ws.shadow_path, "shadow")
        require_built(session.ws.balanced_pool_path, "pool")
        event = run_shadow(session, args.tag, args.checkpoint, args.samples).event
    print(f"shadow run {event.tag} ({event.checkpoint}, {event.samples} samples per item): report {event.report}")
    for name, value in event.statistics.items():
        print(f"  {name:<20} {'-' if value is None else f'{value:.4f}'}")
    return 0
