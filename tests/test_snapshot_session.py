"""A writing session opens from the projection snapshot: it reads the lines after its anchor, not the log,
and its file views go on from where the last session left them; anything that does not match is rebuilt."""

from __future__ import annotations

import shutil

import pytest

from rc1.config import load_config
from rc1.events import schema as ev
from rc1.events.log import read_log
from rc1.events.replay import replay
from rc1.events.snapshot import read_snapshot
from rc1.session import Session
from rc1.views.mirrors import Mirrors
from rc1.workspace import Workspace

pytestmark = pytest.mark.e2e

VIEWS = ("logs/train.log", "reports/metrics.jsonl", "reports/ckpt_manifest.jsonl", "reports/preflight/round1.json",
         "reports/preflight/round2_pass.json")


def _open(root, monkeypatch) -> Session:
    monkeypatch.chdir(root)
    return Session.open(load_config("configs/short.yaml"))


def _rebuilt_views(root, tmp_path) -> dict[str, bytes]:
    """The views as `rc1 report` would write them from the whole log, in a scratch copy."""
    scratch = tmp_path / "scratch"
    shutil.copytree(root / "events", scratch / "events")
    ws = Workspace(root=scratch, run="local")
    Mirrors(ws).rebuild(read_log(ws.log_path).events)
    return {name: (scratch / name).read_bytes() for name in VIEWS}


def test_a_session_on_a_finished_run_reads_only_past_the_snapshot_and_appends_to_its_views(finished_copy, tmp_path,
                                                                                         monkeypatch):
    anchor = read_snapshot(Workspace(root=finished_copy, run="local")).anchor
    with _open(finished_copy, monkeypatch) as session:
        assert session.log.contents.base == anchor and session.log.contents.events == []  # nothing decoded
        assert session.projection == replay(read_log(session.ws.log_path).events).projection
        session.append(ev.ArtifactWritten(path="x", sha256="0" * 64, bytes=1))
    assert {name: (finished_copy / name).read_bytes() for name in VIEWS} == _rebuilt_views(finished_copy, tmp_path)
    assert read_snapshot(Workspace(root=finished_copy, run="local")).seq == anchor.seq + 2  # run_started + artifact


@pytest.mark.parametrize("change", ["cut short", "deleted"])
def test_views_changed_under_the_snapshot_are_rebuilt_from_the_whole_log(finished_copy, tmp_path, monkeypatch, change):
    if change == "cut short":
        metrics = finished_copy / "reports/metrics.jsonl"
        metrics.write_bytes(metrics.read_bytes()[:-40])
    else:
        (finished_copy / "reports/preflight/round1.json").unlink()
    with _open(finished_copy, monkeypatch) as session:
        assert session.log.contents.base is not None  # the log itself is still read from the anchor
    assert {name: (finished_copy / name).read_bytes() for name in VIEWS} == _rebuilt_views(finished_copy, tmp_path)
