"""`rc1 train [--all]`: the next unfinished line of training (`--all`: every one, then the verdict across seeds).
Under a multi-process launch every rank runs this; rank 0 is the writer and the others follow."""

from __future__ import annotations

import argparse
from pathlib import Path

from rc1.cli.args import config_args, config_of
from rc1.core import distributed

HELP = "start or resume training (requires round 2)"


def arguments(parser: argparse.ArgumentParser) -> None:
    config_args(parser)
    parser.add_argument(
        "--resume", metavar="PATH", help="checkpoint dir to resume from (must have a checkpoint_saved event)"
    )
    parser.add_argument(
        "--all",
        action="store_true",
        help="train every unfinished line of run.seeds in turn, then the verdict across seeds (what one "
        "multi-process launch runs: accelerate launch ... -m rc1 train --all)",
    )
    parser.add_argument(
        "--rank-wait",
        metavar="MINUTES",
        type=float,
        default=distributed.RANK_WAIT_MINUTES,
        help="under a multi-process launch, how long a rank waits at a collective for the others (rank 0 "
        "scoring a step with the judge, publishing a checkpoint, deciding a verdict) before the "
        "launch fails (the process group's timeout, NCCL's or gloo's; default %(default)s)",
    )


def run(args: argparse.Namespace) -> int:
    """Each line's session is opened anew so the followers read what rank 0 wrote of the line before."""
    from rc1.train.launch import refuse_unsupported_launch

    loaded = config_of(args)
    resume = Path(args.resume) if args.resume else None
    # A launch rc1 cannot train is refused on every rank from the config alone, before the training stack is
    # imported or the process group joined (run_training refuses it again on each line's config).
    refuse_unsupported_launch(loaded.config)
    distributed.join(args.rank_wait)
    from rc1.app.session import FollowerSession, Session
    from rc1.app.train import run_training

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
