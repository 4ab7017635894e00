"""`rc1 report`: the report and log views, the plots and the release verdicts, rebuilt from the event log (and the
plots sent to the run's trackers)."""

from __future__ import annotations

import argparse

from rc1.cli.args import config_args, config_for_reading
from rc1.core.errors import BadInput
from rc1.core.workspace import Workspace
from rc1.eventlog.log import read_log
from rc1.run import events as ev
from rc1.run.replay import replay
from rc1.views.mirrors import Mirrors

HELP = "rebuild the report and log views from the event log"


def arguments(parser: argparse.ArgumentParser) -> None:
    config_args(parser)
    parser.add_argument(
        "--no-verdicts",
        action="store_true",
        help="leave out the release verdicts (make run: `rc1 advance --all` has just printed them)",
    )


def run(args: argparse.Namespace) -> int:
    loaded = config_for_reading(args)
    ws = Workspace.here(loaded.config.run.name)
    contents = read_log(ws.log_path)
    if not contents.events:
        raise BadInput(f"{ws.log_path}: no events to report on")
    mirrors = Mirrors(ws)
    mirrors.rebuild(contents.events)
    print(f"rebuilt from {len(contents.events)} events of {ws.log_path.relative_to(ws.root)}:")
    for path in mirrors.written():
        print(f"view: {path.relative_to(ws.root)}")
    from rc1.views.plots import draw_all

    plots = draw_all(ws, contents.events)
    for path in plots:
        print(f"plot: {path.relative_to(ws.root)}")
    projection = replay(contents.events).projection
    if projection.trackers and plots:
        from rc1.views.trackers import send_plots

        for name in send_plots(ws, projection.trackers, loaded.config.tracking.report_to, plots, projection.step):
            print(f"plots sent to {name} ({projection.trackers[name]})")
    if not args.no_verdicts:
        _print_verdicts(contents.events)
    return 0


def _print_verdicts(events: list[ev.AnyEvent]) -> None:
    """The release verdict of every line of training, as it was printed when the line completed."""
    from rc1.views.release import release_table, verdict_line

    verdicts = [(i, e) for i, e in enumerate(events) if isinstance(e, ev.ReleaseEvaluated)]
    for i, verdict in verdicts:
        evals = replay(events[:i]).projection.evals
        if evals and verdict.step is not None:
            print(release_table(evals, verdict.step))
        print(verdict_line(verdict))
