"""A writing session opens from the projection snapshot: it reads the lines after its anchor, not the log,
and its file views go on from where the last session left them; anything that does not match is rebuilt."""

from __future__ import annotations

import shutil

import msgspec
import pytest
from conftest import rc1_here

from rc1.app.session import Session
from rc1.config.loading import load_config
from rc1.core.workspace import Workspace
from rc1.eventlog.log import read_log
from rc1.eventlog.snapshot import read_snapshot
from rc1.run import events as ev
from rc1.run.replay import replay
from rc1.views.mirrors import Mirrors

pytestmark = pytest.mark.e2e

VIEWS = (
    "logs/train.log",
    "reports/metrics.jsonl",
    "reports/ckpt_manifest.jsonl",
    "reports/preflight/round1.json",
    "reports/preflight/round2_pass.json",
)


def _open(root, monkeypatch) -> Session:
    monkeypatch.chdir(root)
    return Session.open(load_config("configs/short.yaml"))


def _rebuilt_views(root, tmp_path) -> dict[str, bytes]:
    """The views as `rc1 report` would write them from the whole log, in a scratch copy (with train.log, whose
    library lines a rebuild keeps)."""
    scratch = tmp_path / "scratch"
    shutil.copytree(root / "events", scratch / "events")
    shutil.copytree(root / "logs", scratch / "logs")
    ws = Workspace(root=scratch, run="local")
    Mirrors(ws).rebuild(read_log(ws.log_path).events)
    return {name: (scratch / name).read_bytes() for name in VIEWS}


def test_a_session_on_a_finished_run_reads_only_past_the_snapshot_and_appends_to_its_views(
    finished_copy, tmp_path, monkeypatch
):
    anchor = read_snapshot(Workspace(root=finished_copy, run="local")).anchor
    with _open(finished_copy, monkeypatch) as session:
        assert session.log.contents.base == anchor and session.log.contents.events == []  # nothing decoded
        assert session.projection == replay(read_log(session.ws.log_path).events).projection
        session.append(ev.ArtifactWritten(path="x", sha256="0" * 64, bytes=1))
    assert {name: (finished_copy / name).read_bytes() for name in VIEWS} == _rebuilt_views(finished_copy, tmp_path)
    assert read_snapshot(Workspace(root=finished_copy, run="local")).seq == anchor.seq + 2  # run_started + artifact


def test_views_cut_under_the_snapshot_are_rebuilt_from_the_whole_log_at_the_first_append(
    finished_copy, tmp_path, monkeypatch
):
    metrics = finished_copy / "reports/metrics.jsonl"
    metrics.write_bytes(metrics.read_bytes()[:-40])
    cut = metrics.read_bytes()
    # A session that appends nothing leaves them (and records them as not in step), so that `advance` on a finished
    # run of a million events does not rebuild them.
    with _open(finished_copy, monkeypatch) as session:
        assert session.log.contents.base is not None  # the log itself is still read from the anchor
        assert not session.mirrors.in_step
    assert metrics.read_bytes() == cut
    assert read_snapshot(Workspace(root=finished_copy, run="local")).views == msgspec.Raw(b"null")
    # The next one to append rebuilds them from the whole log, its own events included.
    with _open(finished_copy, monkeypatch) as session:
        session.append(ev.ArtifactWritten(path="x", sha256="0" * 64, bytes=1))
        assert session.mirrors.in_step
    assert {name: (finished_copy / name).read_bytes() for name in VIEWS} == _rebuilt_views(finished_copy, tmp_path)
    assert read_snapshot(Workspace(root=finished_copy, run="local")).views != msgspec.Raw(b"null")


def test_a_deleted_round_report_is_written_again_from_the_snapshot_when_a_session_opens(
    finished_copy, tmp_path, monkeypatch
):
    (finished_copy / "reports/preflight/round1.json").unlink()
    with _open(finished_copy, monkeypatch) as session:
        assert session.mirrors.in_step  # the rounds' state is the snapshot's: no rebuild is needed
    assert {name: (finished_copy / name).read_bytes() for name in VIEWS} == _rebuilt_views(finished_copy, tmp_path)


def test_a_log_without_a_snapshot_or_views_is_opened_without_building_them(finished_copy, tmp_path, monkeypatch):
    """A run copied without its snapshot and views (or written by an rc1 whose projection differed): the session
    replays the whole log and writes a snapshot, and builds no view until it appends; `rc1 report` builds them."""
    shutil.rmtree(finished_copy / "logs")
    shutil.rmtree(finished_copy / "reports")
    (finished_copy / "events/local.snapshot.json").unlink()
    with _open(finished_copy, monkeypatch) as session:
        assert session.log.contents.base is None and not session.mirrors.in_step
        assert session.projection == replay(read_log(session.ws.log_path).events).projection
    assert not (finished_copy / "logs").exists() and not (finished_copy / "reports").exists()
    assert read_snapshot(Workspace(root=finished_copy, run="local")) is not None  # the next open is warm
    assert rc1_here(finished_copy, "report", "--no-verdicts").returncode == 0
    assert {name: (finished_copy / name).read_bytes() for name in VIEWS} == _rebuilt_views(finished_copy, tmp_path)


def test_warnings_and_library_records_go_to_train_log_and_survive_a_rebuild(finished_copy, monkeypatch):
    import logging
    import warnings

    with _open(finished_copy, monkeypatch) as session:
        warnings.warn("the tokenizer has no pad token", UserWarning, stacklevel=1)
        logging.getLogger("transformers.trainer").warning("resuming from %s", "step_8")
        logging.getLogger("trl").info("below WARNING: not written")
        session.append(ev.ArtifactWritten(path="x", sha256="0" * 64, bytes=1))
    lines = (finished_copy / "logs/train.log").read_text().splitlines()
    library = [line for line in lines if "event='library'" in line]
    assert len(library) == 2
    assert "logger='py.warnings'" in library[0] and "the tokenizer has no pad token" in library[0]
    assert "logger='transformers.trainer'" in library[1] and "resuming from step_8" in library[1]
    assert "seq=" not in library[0] and lines.index(library[1]) < len(lines) - 1  # before the artifact's line
    assert not logging.getLogger().handlers or all(
        type(h).__name__ != "LibraryOutput" for h in logging.getLogger().handlers
    )

    Mirrors(Workspace(root=finished_copy, run="local")).rebuild(read_log(finished_copy / "events/local.jsonl").events)
    assert (finished_copy / "logs/train.log").read_text().splitlines() == lines  # kept, in time order


def test_after_a_kill_the_views_go_on_from_the_last_checkpoints_snapshot(finished_copy, tmp_path, monkeypatch):
    """A session that dies after a checkpoint leaves views longer than its last snapshot recorded: the next
    session cuts them back and writes the tail again (library lines kept), instead of rebuilding from the log."""
    import logging

    from rc1.eventlog.log import read_log_after

    session = _open(finished_copy, monkeypatch)
    session.append(
        ev.TrainStep(
            step=13, loss=0.1, kl=0.0, ratio=0.0, lr=1e-5, reward=0.5, mem_used_mb=1.0, sec_per_step=0.1, tokens=8
        )
    )
    session.append(ev.CheckpointSaved(step=13, dir="checkpoints/local/step_00013", files={}))  # snapshot here
    session.append(
        ev.TrainStep(
            step=14, loss=0.1, kl=0.0, ratio=0.0, lr=1e-5, reward=0.5, mem_used_mb=1.0, sec_per_step=0.1, tokens=8
        )
    )
    logging.getLogger("trl").warning("written after the last snapshot")
    session._library.uninstall()
    session.log.close()  # killed: no closing snapshot

    ws = Workspace(root=finished_copy, run="local")
    snapshot = read_snapshot(ws)
    tail = read_log_after(ws.log_path, snapshot.anchor)
    assert [e.step for e in tail.events] == [14]
    assert Mirrors(ws).resume(snapshot.views, tail.events)  # resumed, not rebuilt
    views = {name: (finished_copy / name).read_bytes() for name in VIEWS}
    assert (
        views == _rebuilt_views(finished_copy, tmp_path)
        and b"written after the last snapshot" in views["logs/train.log"]
    )
