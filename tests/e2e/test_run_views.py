"""Every run of a workspace has its own views: two runs side by side, one killed and resumed while the other
trains, each end with views that hold their own lines only (the same as rebuilt from their own log). And a run
remembers its own config: resumed by its name alone, without the overrides it was started with, it goes on to the
same steps as an uninterrupted run."""

import json
import shutil
import signal

import pytest
from conftest import events, make_workspace, rc1_here, rc1_killed_at

from rc1.core.workspace import Workspace
from rc1.eventlog.log import read_log
from rc1.views.library_log import is_library_line
from rc1.views.mirrors import Mirrors

pytestmark = pytest.mark.e2e

VIEWS = (
    "metrics.jsonl",
    "ckpt_manifest.jsonl",
    "preflight/round1.json",
    "preflight/round2_pass.json",
    "config_effective.yaml",
)


def _rebuilt(ws: Workspace, scratch) -> Workspace:
    """The run's views as `rc1 report` writes them from its own log alone, in a scratch workspace."""
    copy = Workspace(root=scratch, run=ws.run)
    copy.events_dir.mkdir(parents=True)
    shutil.copy(ws.log_path, copy.log_path)
    Mirrors(copy).rebuild(read_log(copy.log_path).events)
    return copy


def _event_lines(path) -> list[str]:
    return [line for line in path.read_text().splitlines() if not is_library_line(line)]


STARTED_WITH = ("--set", "train.max_steps=8", "--set", "train.eval_steps=4")  # configs/short.yaml: 12 and 4


def test_two_runs_side_by_side_one_resumed_by_its_name_alone_keep_their_own_views_and_config(tmp_path):
    root = make_workspace(tmp_path)
    killed = rc1_killed_at(root, "append:train_step@6", "advance", "--all", *STARTED_WITH)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    other = rc1_here(root, "advance", "--all", "--set", "run.name=other", *STARTED_WITH)
    assert other.returncode == 0, other.stderr
    # The probe: the run resumed by its name alone, with neither the config file nor the overrides it was started
    # with (configs/local.yaml trains 120 steps).
    resumed = rc1_here(root, "advance", "--all", "--run", "local", config=None)
    assert resumed.returncode == 0, resumed.stderr
    assert "gate_invalidated" not in {e["type"] for e in events(root)}
    assert "uses the config it was started with" not in resumed.stderr  # local.yaml is not its file: nothing to say
    assert rc1_here(root, "audit", "--run", "local", config=None).returncode == 0
    finals = {
        name: {e["step"]: (e["loss"], e["reward"]) for e in events(root, name) if e["type"] == "train_step"}
        for name in ("local", "other")
    }
    assert finals["local"] == finals["other"] and max(finals["local"]) == 8  # the same steps as the uninterrupted run

    runs = {"local": Workspace(root=root, run="local"), "other": Workspace(root=root, run="other")}
    assert runs["local"].reports_dir == root / "reports" and runs["other"].reports_dir == root / "reports" / "other"
    assert runs["other"].train_log_path == root / "logs" / "other" / "train.log"
    for name, ws in runs.items():
        assert {e["run"] for e in events(root, name)} == {name}
        rebuilt = _rebuilt(ws, tmp_path / f"scratch-{name}")
        for view in VIEWS[:-1]:
            assert (ws.reports_dir / view).read_bytes() == (rebuilt.reports_dir / view).read_bytes(), (name, view)
        assert _event_lines(ws.train_log_path) == _event_lines(rebuilt.train_log_path), name
        assert f"name: {name}" in (ws.reports_dir / VIEWS[-1]).read_text()
        steps = [json.loads(line) for line in (ws.reports_dir / "metrics.jsonl").read_text().splitlines()]
        logged = [e for e in events(root, name) if e["type"] == "train_step"]
        assert [(s["run"], s["seq"]) for s in steps] == [(name, e["seq"]) for e in logged] and steps[-1]["step"] == 8

    before = events(root, "other")
    asked_otherwise = rc1_here(root, "advance", "--set", "run.name=other")  # short.yaml: 12 steps, not the 8 it kept
    assert asked_otherwise.returncode == 3 and "train.max_steps: 8 (kept) -> 12" in asked_otherwise.stderr
    read_otherwise = rc1_here(root, "report", "--set", "run.name=other")  # reading: the run's own, and what would be
    assert read_otherwise.returncode == 0 and "train.max_steps is 8, would be 12" in read_otherwise.stderr
    assert events(root, "other") == before
    report = rc1_here(root, "report", "--run", "other", config=None)
    assert report.returncode == 0, report.stderr
    assert (
        "view: reports/other/metrics.jsonl" in report.stdout
        and "plot: reports/other/plots/training.png" in report.stdout
    )
