"""`rc1 replay --until POINT`: the run's status as it stood at a point of its log (a step, a seq, an event type or a
moment), replayed from the log's first line; read-only."""

from __future__ import annotations

import argparse
import datetime as dt
import re
from collections.abc import Callable

from rc1.cli.args import config_args, config_for_reading
from rc1.cli.commands.status import print_view
from rc1.core.errors import BadInput
from rc1.core.workspace import Workspace
from rc1.eventlog.log import read_log
from rc1.run import events as ev
from rc1.run.replay import replay
from rc1.views.status import status_view

HELP = "the run as it stood at a point of its log"


def arguments(parser: argparse.ArgumentParser) -> None:
    config_args(parser)
    parser.add_argument("--until", required=True, help="step_N | seq:N | <event type> | <ISO time>")
    parser.add_argument("--json", action="store_true")


def parse_until(text: str) -> Callable[[ev.AnyEvent], bool]:
    """A predicate over events: true for the event at which replay stops (inclusive)."""
    if m := re.fullmatch(r"step_(\d+)", text):
        step = int(m.group(1))
        return lambda e: isinstance(e, ev.TrainStep) and e.step == step
    if m := re.fullmatch(r"seq:(\d+)", text):
        seq = int(m.group(1))
        return lambda e: e.seq == seq
    if text in ev.EVENT_TYPES:
        return lambda e: ev.event_type(e) == text
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        raise BadInput(
            f"--until {text!r}: expected step_N, seq:N, an event type ({', '.join(sorted(ev.EVENT_TYPES))}) or an ISO "
            "time"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.timezone.utc)
    return lambda e: dt.datetime.fromisoformat(e.ts) > moment


def _where_it_ends(events: list[ev.AnyEvent]) -> str:
    """Where the log ends, in the terms --until takes: its last step, its last seq and event, and when."""
    if not events:
        return "the log is empty"
    last = events[-1]
    steps = [e.step for e in events if isinstance(e, ev.TrainStep)]
    trained = f"its last step is step_{steps[-1]}" if steps else "it has no train_step yet"
    return f"{trained}; it ends at seq:{last.seq} ({ev.event_type(last)}, {last.ts})"


def run(args: argparse.Namespace) -> int:
    loaded = config_for_reading(args)
    ws = Workspace.here(loaded.config.run.name)
    stop = parse_until(args.until)
    is_time = not re.fullmatch(r"step_\d+|seq:\d+", args.until) and args.until not in ev.EVENT_TYPES
    events = read_log(ws.log_path).events
    cut = None
    for index, event in enumerate(events):
        if stop(event):
            # A time bound excludes the first event after it; the other bounds include the event they name.
            cut = index if is_time else index + 1
            break
    if cut is None and not is_time:
        raise BadInput(f"{ws.log_path}: no event matches --until {args.until!r}; {_where_it_ends(events)}")
    replayer = replay(events if cut is None else events[:cut])
    print_view(status_view(replayer, None, ws.run), args.json)
    return 0
