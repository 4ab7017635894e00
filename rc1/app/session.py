"""The composition root of a writing command: config + workspace + locked log + replay + views."""

from __future__ import annotations

import logging
import sys

from rc1.config.kept import keep_config
from rc1.config.loading import LoadedConfig, effective_yaml
from rc1.core import provenance
from rc1.core.errors import GateClosed
from rc1.core.fsutil import atomic_write_text
from rc1.core.workspace import Workspace
from rc1.eventlog.log import EventLog, read_log
from rc1.eventlog.snapshot import read_snapshot, replay_log, write_snapshot
from rc1.run import events as ev
from rc1.run.aggregate import RunAggregate
from rc1.run.projection import Projection
from rc1.run.replay import Replayer
from rc1.views.library_log import LibraryOutput
from rc1.views.mirrors import Mirrors

log = logging.getLogger("rc1.tracking")


class _RunView:
    """What every command's handle has: the config, the workspace, and the log replayed into a projection."""

    loaded: LoadedConfig
    ws: Workspace
    replayer: Replayer

    @property
    def projection(self) -> Projection:
        return self.replayer.projection

    @property
    def config(self):
        return self.loaded.config


class _Started:
    """Whether a session has appended run_started, and the trackers that first append attached. Shared by the session
    and every line view of it (rc1/app/policy.py `line_session`, a shallow copy), so run_started is appended once and
    closing the session finishes trackers a line attached."""

    def __init__(self, loaded: LoadedConfig) -> None:
        self.announced = False
        self.trackers = None
        self.loaded = loaded  # the run's config, as the command opened it (a line's view changes its seed)


class Session(_RunView):
    """One command's exclusive handle on a run. Appending keeps projection and views current."""

    def __init__(
        self,
        loaded: LoadedConfig,
        ws: Workspace,
        *,
        allow_torn: bool = False,
        allow_refused: bool = False,
        accept_changed_inputs: bool = False,
    ):
        self.loaded = loaded
        self.ws = ws
        # The command was told to go on with inputs that differ from what the gates passed on (invalidating them).
        self.accept_changed_inputs = accept_changed_inputs
        # What a command that appends nothing to a run with no log must not leave behind (close: `_forget_new_run`)
        folders = (ws.logs_dir, ws.reports_dir, ws.root / "logs", ws.root / "reports", ws.events_dir)  # deepest first
        self._new = [p for p in dict.fromkeys(folders) if not p.exists()]
        self._new_files = [p for p in (ws.train_log_path, ws.reports_dir / "metrics.jsonl") if not p.exists()]
        self._new_files.append(ws.reports_dir / "ckpt_manifest.jsonl")
        snapshot = read_snapshot(ws)
        # Under the lock, the log is read from the snapshot's anchor when it still holds that line: opening a
        # finished million-event run reads its tail, not its length.
        self.log = EventLog(
            ws.log_path,
            ws.lock_path,
            ws.run,
            allow_torn=allow_torn,
            after=snapshot.anchor if snapshot is not None else None,
        )
        tail = self.log.contents
        self.replayer = snapshot.replayer() if tail.base is not None else Replayer()
        self.replayer.apply_all(tail.events)
        self.run = RunAggregate(self.replayer)
        if not allow_refused:
            self._refuse_a_log_with_violations()
        self.mirrors = Mirrors(ws)
        if tail.base is None or not self.mirrors.resume(snapshot.views, tail.events):
            # No snapshot, or the views were changed under it: rebuilt from the whole log at this session's first
            # append (read again then, under the lock: the events are not kept in memory meanwhile).
            self.mirrors.defer_rebuild(lambda: read_log(ws.log_path).events)
        self.log.subscribe(self.replayer.apply)
        self.log.subscribe(self.mirrors)
        self.log.subscribe(self._snapshot_at_checkpoints)
        self._library = LibraryOutput(self.mirrors.library_line).install()
        self._started = _Started(loaded)

    @classmethod
    def open(
        cls,
        loaded: LoadedConfig,
        *,
        allow_torn: bool = False,
        allow_refused: bool = False,
        accept_changed_inputs: bool = False,
    ) -> Session:
        return cls(
            loaded,
            Workspace.here(loaded.config.run.name),
            allow_torn=allow_torn,
            allow_refused=allow_refused,
            accept_changed_inputs=accept_changed_inputs,
        )

    def _refuse_a_log_with_violations(self) -> None:
        """A log holding events the state machine refused is not written to: what comes next cannot be decided
        from it. Refused when the session opens, before any stage does work it could not record."""
        violations = self.projection.violations
        if violations:
            self.log.close()
            raise GateClosed(
                f"{self.ws.log_path}: {len(violations)} event(s) the state machine refused, the first at "
                f"seq {violations[0].seq} ({violations[0].message}), written by an older rc1; nothing more "
                "is appended until they are set aside: `rc1 repair` (see `rc1 audit`)"
            )

    @property
    def head(self) -> tuple[int, str]:
        """(seq, hash) of the log's last line."""
        return self.log.head

    def append(self, event: ev.Event) -> ev.Event:
        """Persist an event the run's rules allow now, and publish it (projection, views); one they refuse raises
        EventRefused (exit 3) before a byte is written. The first append of a session is preceded by run_started."""
        self.run.decide(event)
        if not self._started.announced:
            self._started.announced = True
            self._announce()
        return self.log.append(event)

    def _attach_trackers(self) -> None:
        """The trackers of `tracking.report_to`: each run's id recorded once (tracker_attached) and reused; first sent
        what a session before this one appended but did not get to send, then every event this one appends."""
        from rc1.views.trackers import BACKENDS, Trackers, start_tracker

        trackers, attached = [], []
        for name in self.config.tracking.report_to:
            recorded = self.projection.trackers.get(name)
            try:
                run_id = recorded if recorded is not None else BACKENDS[name].new_run(self.ws)
            except Exception as e:  # a tracker that cannot be reached never stops the run: it warns and stays off
                log.warning(
                    "tracker %s could not be started (%s: %s); the run goes on without it", name, type(e).__name__, e
                )
                continue
            tracker = start_tracker(name, self.ws, run_id)
            if tracker is None:
                continue
            if recorded is None:  # outside the guard: an append that fails (a full disk) is the run's failure
                attached.append(self.log.append(self.run.attach_tracker(name, run_id)))
            trackers.append(tracker)
        self._started.trackers = Trackers(trackers)
        self._started.trackers.catch_up(read_log(self.ws.log_path).events)
        if attached:
            self._started.trackers.config(effective_yaml(self.loaded), attached[0].seq)
        self.log.subscribe(self._started.trackers)

    def _announce(self) -> None:
        atomic_write_text(self.ws.reports_dir / "config_effective.yaml", effective_yaml(self.loaded))
        from rc1.train.device import select_device

        # The run's config is fixed by its first command, and again by one told to change it: the config
        # load_run_config gave this command is the run's from here on, for every later command that names the run.
        run_config = self._started.loaded
        keeps = self.projection.kept_config != run_config.sha256
        if keeps:
            keep_config(self.ws, run_config)
        self.log.append(
            self.run.start_run(
                keeps=keeps,
                config_path=str(self.loaded.path),
                config_sha256=self.loaded.sha256,
                code_version=provenance.code_version(),
                packages=provenance.package_versions(),
                host=provenance.host(),
                device=select_device(),
                python=provenance.python_version(),
            )
        )
        if self.config.tracking.report_to:
            self._attach_trackers()

    def _snapshot_at_checkpoints(self, event: ev.Event) -> None:
        # A run killed mid-training reopens from its last checkpoint's snapshot, not from its first line.
        if isinstance(event, ev.CheckpointSaved):
            self._snapshot()

    def _snapshot(self) -> None:
        # A snapshot only saves reading: when it cannot be written (a full disk), the one before it stays, still
        # anchored to a line the log holds, and the next open reads a longer tail. Never a reason to fail.
        try:
            write_snapshot(self.ws, self.replayer, self.log.anchor, self.mirrors.state())
        except OSError as e:
            print(
                f"warning: {self.ws.events_dir}: the projection snapshot was not written ({e.strerror}); the next "
                "command reads more of the log",
                file=sys.stderr,
            )

    def close(self) -> None:
        if self._started.trackers is not None:
            self._started.trackers.close()
        self._library.uninstall()
        if not self.ws.log_path.exists():
            self._forget_new_run()
        else:
            self._snapshot()
        self.log.close()

    def _forget_new_run(self) -> None:
        """A command that appended nothing to a run that has no log (refused before its first event) leaves nothing
        of it: not its lock, not the views it opened."""
        self.log.forget()
        for path in self._new_files:
            if path.is_file() and path.stat().st_size == 0:
                path.unlink()
        for folder in self._new:
            if folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class FollowerSession(_RunView):
    """A non-zero rank's view of the run under a multi-process launch (rc1/core/distributed.py): the log read and
    replayed once, without the lock; its appends go nowhere, because rank 0 makes them."""

    def __init__(self, loaded: LoadedConfig, ws: Workspace):
        self.loaded = loaded
        self.ws = ws
        self.replayer, contents = replay_log(ws)  # a line rank 0 is writing right now is left out
        self.head = (self.replayer.projection.head_seq, contents.head_hash)  # (seq, hash) of the last line read
        # The same rules decide a follower's commands (it starts training from the state rank 0 starts from); what
        # they return goes nowhere.
        self.run = RunAggregate(self.replayer)

    @classmethod
    def open(cls, loaded: LoadedConfig) -> FollowerSession:
        return cls(loaded, Workspace.here(loaded.config.run.name))

    def append(self, event: ev.Event) -> ev.Event:
        return event

    def close(self) -> None:
        pass

    def __enter__(self) -> FollowerSession:
        return self

    def __exit__(self, *exc) -> None:
        pass
