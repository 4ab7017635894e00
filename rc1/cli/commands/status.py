"""`rc1 status`: state, allowed actions, progress, gates and the last error, replayed from the log (a verified
snapshot and the lines after it); read-only, no lock taken."""

from __future__ import annotations

import argparse

import msgspec

from rc1.cli.args import config_args, config_for_reading
from rc1.core.workspace import Workspace
from rc1.data.fingerprints import current_fingerprints
from rc1.eventlog.snapshot import replay_log
from rc1.views.status import StatusView, render_text, status_view

HELP = "state, allowed actions, progress, gates, last error"


def arguments(parser: argparse.ArgumentParser) -> None:
    config_args(parser)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--diagram", action="store_true", help="print the state machine as Mermaid")


def run(args: argparse.Namespace) -> int:
    loaded = config_for_reading(args)
    if args.diagram:
        from rc1.run.machine import RunMachine

        print(RunMachine(diagram=True).mermaid())
        return 0
    ws = Workspace.here(loaded.config.run.name)
    replayer, read = replay_log(ws)
    print_view(status_view(replayer, current_fingerprints(ws, loaded), ws.run, len(read.torn)), args.json)
    return 0


def print_view(view: StatusView, as_json: bool) -> None:
    print(msgspec.json.format(msgspec.json.encode(view)).decode() if as_json else render_text(view))
