"""`rc1 repair`: move a torn tail to events/<run>.torn-<offset>, cut the log back and append log_repaired; set aside
the events an older rc1 wrote although the machine refused them (refused_set_aside), so the run can go on."""

from __future__ import annotations

import argparse
import hashlib

from rc1.app.session import Session
from rc1.cli.args import config_args, config_of
from rc1.core.fsutil import atomic_write_bytes, fsync_dir

HELP = "quarantine a torn tail and append log_repaired"


def arguments(parser: argparse.ArgumentParser) -> None:
    config_args(parser)


def run(args: argparse.Namespace) -> int:
    with Session.open(config_of(args), allow_torn=True, allow_refused=True) as session:
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
