"""`rc1 repair`, `rc1 report`, `rc1 failpack`: looking after a run's log and its views."""

from __future__ import annotations

import hashlib
from pathlib import Path

from rc1.app.session import Session
from rc1.cli._run_config import config_of
from rc1.core.errors import BadInput
from rc1.core.failure import utc_stamp, write_failpack
from rc1.core.fsutil import atomic_write_bytes, fsync_dir
from rc1.core.workspace import Workspace
from rc1.eventlog.log import read_log
from rc1.run import events as ev
from rc1.run.replay import replay
from rc1.views.mirrors import Mirrors


def repair(args) -> int:
    """Move a torn tail to events/<run>.torn-<offset>, cut the log back, append log_repaired; set aside the events
    an older rc1 wrote although the machine refused them (refused_set_aside), so the run can go on."""
    loaded = config_of(args)
    with Session.open(loaded, allow_torn=True, allow_refused=True) as session:
        torn = session.log.contents.torn
        if torn:
            _cut_torn_tail(session, torn)
        refused = session.projection.violations
        if refused:
            session.append(session.run.set_aside_refused())
            print(
                f"set aside {len(refused)} event(s) the state machine refused (seq "
                f"{', '.join(str(v.seq) for v in refused)}); they stay in the log, unfolded, and `rc1 audit` lists them"
            )
        if not torn and not refused:
            print(f"{session.ws.log_path}: no torn tail and no refused event; nothing to repair")
    return 0


def _cut_torn_tail(session: Session, torn: bytes) -> None:
    offset = session.log.contents.good_bytes
    quarantine = session.ws.events_dir / f"{session.ws.run}.torn-{offset}"
    atomic_write_bytes(quarantine, torn)
    session.log.truncate_torn_tail()
    fsync_dir(session.ws.events_dir)
    session.append(
        session.run.repair_log(
            torn_bytes=len(torn),
            offset=offset,
            quarantine=str(quarantine.relative_to(session.ws.root)),
            sha256=hashlib.sha256(torn).hexdigest(),
        )
    )
    print(f"moved {len(torn)} torn bytes to {quarantine}; appended log_repaired")


def report(args) -> int:
    loaded = config_of(args)
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
    _print_verdicts(contents.events)
    return 0


def _print_verdicts(events: list) -> None:
    """The release verdict of every line of training, as it was printed when the line completed."""
    from rc1.views.release import release_table, verdict_line

    verdicts = [(i, e) for i, e in enumerate(events) if isinstance(e, ev.ReleaseEvaluated)]
    for i, verdict in verdicts:
        evals = replay(events[:i]).projection.evals
        if evals and verdict.step is not None:
            print(release_table(evals, verdict.step))
        print(verdict_line(verdict))


def failpack(args) -> int:
    loaded = config_of(args)
    ws = Workspace.here(loaded.config.run.name)
    out = write_failpack(
        ws, Path(args.out) if args.out else ws.reports_dir / f"failpack_{utc_stamp()}.tar.gz", loaded.path
    )
    print(f"wrote {out}")
    return 0
