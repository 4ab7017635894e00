"""`rc1 failpack [--out PATH]`: the run's logs, reports, configs and event log packed into one archive."""

from __future__ import annotations

import argparse
from pathlib import Path

from rc1.cli.args import config_args, config_for_reading
from rc1.core.failure import utc_stamp, write_failpack
from rc1.core.workspace import Workspace

HELP = "pack logs, reports, configs and the event log into one archive"


def arguments(parser: argparse.ArgumentParser) -> None:
    config_args(parser)
    parser.add_argument("--out", help="archive path (default reports/failpack_<ts>.tar.gz)")


def run(args: argparse.Namespace) -> int:
    loaded = config_for_reading(args)
    ws = Workspace.here(loaded.config.run.name)
    out = write_failpack(
        ws, Path(args.out) if args.out else ws.reports_dir / f"failpack_{utc_stamp()}.tar.gz", loaded.path
    )
    print(f"wrote {out}")
    return 0
