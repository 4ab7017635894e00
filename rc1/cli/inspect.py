"""`rc1 status` and `rc1 replay`: read-only views computed by replaying the log (no lock taken)."""

from __future__ import annotations

import datetime as dt
import re

import msgspec

from rc1.cli._run_config import config_of
from rc1.core.errors import BadInput
from rc1.core.workspace import Workspace
from rc1.data.fingerprints import current_fingerprints
from rc1.eventlog.log import read_log
from rc1.eventlog.snapshot import replay_log
from rc1.run import events as ev
from rc1.run.replay import replay
from rc1.views.status import render_text, status_view


def _print(view, as_json: bool) -> None:
    print(msgspec.json.format(msgspec.json.encode(view)).decode() if as_json else render_text(view))


def status(args) -> int:
    loaded = config_of(args)
    if args.diagram:
        from rc1.run.machine import RunMachine

        print(RunMachine(diagram=True).mermaid())
        return 0
    ws = Workspace.here(loaded.config.run.name)
    replayer, read = replay_log(ws)  # a verified snapshot and the lines after it, or the whole log
    _print(status_view(replayer, current_fingerprints(ws, loaded), ws.run, len(read.torn)), args.json)
    return 0


def parse_until(text: str):
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


def replay_until(args) -> int:
    loaded = config_of(args)
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
        raise BadInput(f"{ws.log_path}: no event matches --until {args.until!r}")
    replayer = replay(events if cut is None else events[:cut])
    _print(status_view(replayer, None, ws.run), args.json)
    return 0


def handoff(args) -> int:
    from rc1.views.handoff import default_stage
    from rc1.views.handoff import handoff as bundle_of
    from rc1.views.handoff import render_text as render_handoff

    loaded = config_of(args)
    ws = Workspace.here(loaded.config.run.name)
    events = read_log(ws.log_path).events
    stage = args.round or default_stage(events)  # argparse holds --round to HANDOFF_STAGES
    bundle = bundle_of(events, replay(events), current_fingerprints(ws, loaded), stage)
    print(msgspec.json.format(msgspec.json.encode(bundle)).decode() if args.json else render_handoff(bundle))
    return 0
