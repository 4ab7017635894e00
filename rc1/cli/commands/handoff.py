"""`rc1 handoff [--round 1|2|train]`: the SYNC bundle of a stage (artifacts, checks, risks, blockers, next actions),
from the log; read-only."""

from __future__ import annotations

import argparse

import msgspec

from rc1.cli.args import config_args, config_of
from rc1.core.workspace import Workspace
from rc1.data.fingerprints import current_fingerprints
from rc1.eventlog.log import read_log
from rc1.run.replay import replay
from rc1.views.handoff import STAGES, default_stage, handoff, render_text

HELP = "the SYNC bundle of a stage: artifacts, checks, risks, blockers, next actions"


def arguments(parser: argparse.ArgumentParser) -> None:
    config_args(parser)
    parser.add_argument("--round", choices=STAGES, help="the stage (default: the one the log last worked on)")
    parser.add_argument("--json", action="store_true")


def run(args: argparse.Namespace) -> int:
    loaded = config_of(args)
    ws = Workspace.here(loaded.config.run.name)
    events = read_log(ws.log_path).events
    stage = args.round or default_stage(events)
    bundle = handoff(events, replay(events), current_fingerprints(ws, loaded), stage)
    print(msgspec.json.format(msgspec.json.encode(bundle)).decode() if args.json else render_text(bundle))
    return 0
