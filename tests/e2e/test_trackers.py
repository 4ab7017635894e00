"""Trackers fed from the log: TensorBoard's own reader sees each step exactly once across a SIGKILL and a resume,
and a tracker that fails warns and never stops the run."""

import json
import logging
import math
import os
import signal
import subprocess
import sys
import time

import pytest
from conftest import PATIENCE, events, make_workspace, rc1, rc1_here
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from wandb_log import wandb_history

from rc1.views.trackers import Trackers


@pytest.mark.e2e
def test_every_tracker_gets_each_step_once_across_a_kill_and_a_resume(tmp_path):
    root = make_workspace(tmp_path, **{"tracking.report_to": ["tensorboard", "mlflow", "wandb", "trackio"]})
    # The trackers' own settings: MLflow a file store in the workspace (its maintenance-mode backend, allowed for the
    # test), W&B offline (its files under tracking/<run>/wandb/), Trackio the tests' store (conftest: TRACKIO_DIR).
    mlflow_env = {
        "MLFLOW_TRACKING_URI": f"file:{tmp_path / 'mlruns'}",
        "MLFLOW_ALLOW_FILE_STORE": "true",
        "WANDB_MODE": "offline",
        "WANDB_SILENT": "true",
    }
    killed = rc1(root, "advance", "--all", env={**os.environ, **mlflow_env, "RC1_KILL_AT": "append:train_step@6"})
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    resumed = rc1_here(root, "advance", "--all", env=mlflow_env)
    assert resumed.returncode == 0, resumed.stderr
    # The trackers the training line attached were finished before the command returned, not left to an exit hook.
    assert sys.modules["wandb"].run is None

    log = events(root)
    attached = [(e["backend"], e["run_id"]) for e in log if e["type"] == "tracker_attached"]
    assert attached[0] == ("tensorboard", "tracking/local/tensorboard")
    assert [a[0] for a in attached] == ["tensorboard", "mlflow", "wandb", "trackio"]
    line = EventAccumulator(str(root / "tracking/local/tensorboard/seed_1234"), size_guidance={"scalars": 0}).Reload()
    rewards = line.Scalars("train/reward")
    final = {e["step"]: e["reward"] for e in log if e["type"] == "train_step"}  # the resumed line's steps 5, 6 win
    assert [s.step for s in rewards] == list(range(1, 13))  # steps 5 and 6 ran twice; sent once
    assert [s.value for s in rewards] == pytest.approx([final[step] for step in range(1, 13)], abs=1e-6)
    assert "reward/format" in line.Tags()["scalars"] and "diagnostics/entropy" in line.Tags()["scalars"]
    assert [s.step for s in line.Scalars("eval/sampled_success")] == [0, 4, 8, 12]
    run = EventAccumulator(str(root / "tracking/local/tensorboard"), size_guidance={"tensors": 0}).Reload()
    texts = set(run.Tags()["tensors"])
    assert {"config/text_summary", "round1_passed/text_summary", "release_evaluated/text_summary"} <= texts

    report = rc1(root, "report", env={**os.environ, **mlflow_env})  # the pictures go with the run
    assert report.returncode == 0 and "plots sent to tensorboard (tracking/local/tensorboard)" in report.stdout
    images = EventAccumulator(str(root / "tracking/local/tensorboard"), size_guidance={"images": 0}).Reload()
    assert {"plots/training", "plots/success_by_difficulty", "plots/pool_difficulty"} <= set(images.Tags()["images"])

    # MLflow, read back with its own client: the same steps, once each, in the one run the log recorded.
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=mlflow_env["MLFLOW_TRACKING_URI"])
    run_id = attached[1][1]
    history = client.get_metric_history(run_id, "seed_1234/train/reward")
    assert sorted(m.step for m in history) == list(range(1, 13))
    assert [m.value for m in sorted(history, key=lambda m: m.step)] == pytest.approx(
        [final[s] for s in range(1, 13)], abs=1e-6
    )
    artifacts = {a.path for a in client.list_artifacts(run_id, "plots")}
    assert "plots/training.png" in artifacts and "plots sent to mlflow" in report.stdout

    # W&B offline: one offline folder per session, all of the one run id the log recorded; read back from its files.
    wandb_id = attached[2][1]
    sessions = sorted((root / "tracking/local/wandb/wandb").glob(f"offline-run-*-{wandb_id}"))
    assert len(sessions) == 3, report.stdout  # the killed session, the resumed one, rc1 report
    deadline = time.monotonic() + PATIENCE
    while time.monotonic() < deadline:  # poll for every condition asserted below, with a deadline of minutes
        sent = [
            row
            for folder in sessions
            if (folder / f"run-{wandb_id}.wandb").exists()
            for row in wandb_history(folder / f"run-{wandb_id}.wandb")
        ]
        steps = {
            int(row["seed_1234/step"]): row["seed_1234/train/reward"] for row in sent if "seed_1234/train/reward" in row
        }
        if (  # every condition asserted below: W&B's files grow after finish() returns, the verdict's panel last
            sorted(steps) == list(range(1, 13))
            and all(math.isclose(steps[s], final[s], abs_tol=1e-6) for s in range(1, 13))
            and any("events/release_evaluated/path" in row for row in sent)
            and any("plots/training/path" in row for row in sent)
        ):
            break
        time.sleep(0.5)
    # W&B has no flush: its cursor moves when its run is finished, so the killed session's steps are sent again;
    # the last value sent for each step is the resumed line's.
    assert sorted(steps) == list(range(1, 13))
    assert [steps[s] for s in range(1, 13)] == pytest.approx([final[s] for s in range(1, 13)], abs=1e-6)
    assert any("events/release_evaluated/path" in row for row in sent) and any(
        "plots/training/path" in row for row in sent
    )

    # Trackio, read back with its own storage API: one run, each step once.
    trackio = subprocess.run(
        [
            sys.executable,
            "-c",
            (
                "import json, trackio.sqlite_storage as s; "
                "print(json.dumps([s.SQLiteStorage.get_runs('rc1'), s.SQLiteStorage.get_logs('rc1', 'local')]))"
            ),
        ],
        env={**os.environ},
        capture_output=True,
        text=True,
        check=True,
    )
    runs, rows = json.loads(trackio.stdout.splitlines()[-1])
    assert runs == ["local"] and attached[3][1] == "local"
    steps = [(row["step"], row["seed_1234/train/reward"]) for row in rows if "seed_1234/train/reward" in row]
    assert [s for s, _ in steps] == list(range(1, 13))
    assert [r for _, r in steps] == pytest.approx([final[s] for s in range(1, 13)], abs=1e-6)


class Broken:
    name = "broken"

    def send(self, event):
        raise ConnectionError("quota exceeded")

    def config(self, text, seq):
        pass

    def finish(self):
        pass


def test_a_tracker_whose_package_is_missing_is_a_config_error_naming_the_extra(monkeypatch):
    import importlib.util

    from conftest import REPO

    from rc1.config.loading import load_config
    from rc1.core.errors import BadInput

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "mlflow" else real(name, *a))
    with pytest.raises(BadInput, match=r"tracking.report_to: mlflow needs the 'mlflow' extra"):
        load_config(REPO / "configs/local.yaml", ["tracking.report_to=[mlflow]"])


def test_a_tracker_that_fails_warns_once_and_is_left_off(caplog):
    broken = Broken()
    trackers = Trackers([broken])
    with caplog.at_level(logging.WARNING, logger="rc1.tracking"):
        trackers(object())  # never raises
        trackers(object())
    assert [r.getMessage() for r in caplog.records] == [
        "tracker broken failed (ConnectionError: quota exceeded); it is left off for the rest of this command"
    ]


class Closing:
    """A backend that records its close; `fails` makes the close raise, as a service that went away does."""

    def __init__(self, name: str, fails: bool = False):
        self.name, self.fails, self.closed = name, fails, False

    def finish(self):
        self.closed = True
        if self.fails:
            raise ConnectionError("service gone")


def test_a_tracker_whose_close_fails_does_not_keep_the_next_from_closing(caplog):
    """Each backend is closed whatever the one before it did: a W&B run left open by an MLflow close that raised
    would return before W&B's files are written."""
    first, second, third = Closing("mlflow", fails=True), Closing("wandb"), Closing("trackio")
    with caplog.at_level(logging.WARNING, logger="rc1.tracking"):
        Trackers([first, second, third]).close()
    assert (first.closed, second.closed, third.closed) == (True, True, True)
    assert [r.getMessage() for r in caplog.records] == [
        "tracker mlflow failed (ConnectionError: service gone); it is left off for the rest of this command"
    ]


def test_rc1_report_passes_over_a_tracker_that_cannot_start_and_sends_the_rest(tmp_path):
    """W&B refuses a second writer of a run its service holds ("run ID ... is in use"): the report's pictures still
    reach the other trackers, and the refusal is one warning, not a failed report."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plot = tmp_path / "reward.png"
    plt.plot([0, 1], [0, 1])
    plt.savefig(plot)
    env = {**os.environ, "WANDB_MODE": "offline", "WANDB_SILENT": "true"}
    env.pop("WANDB_SERVICE", None)
    workspace = (
        "import sys; from pathlib import Path; from rc1.core.workspace import Workspace; "
        "ws = Workspace(root=Path(sys.argv[1]), run='busy'); "
    )
    # A process holding W&B run busy0001 open, whose service (its address in WANDB_SERVICE) the sender then joins.
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            workspace
            + (
                "import os; from rc1.views.trackers import WandB; run = WandB(ws, 'busy0001'); "
                "print(os.environ['WANDB_SERVICE'], flush=True); sys.stdin.readline(); run.finish()"
            ),
            str(tmp_path),
        ],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        service = holder.stdout.readline().strip()
        assert service, "the holder's W&B service did not start"
        sender = subprocess.run(
            [
                sys.executable,
                "-c",
                workspace
                + (
                    "from rc1.views.trackers import send_plots; "
                    "print(send_plots(ws, {'tensorboard': 'tracking/busy/tensorboard', 'wandb': 'busy0001'}, "
                    "['tensorboard', 'wandb'], [Path(sys.argv[2])], 3))"
                ),
                str(tmp_path),
                str(plot),
            ],
            env={**env, "WANDB_SERVICE": service},
            capture_output=True,
            text=True,
            timeout=PATIENCE,
        )
    finally:
        holder.communicate("\n", timeout=PATIENCE)
    assert sender.returncode == 0, sender.stderr
    assert sender.stdout.splitlines()[-1] == "['tensorboard']"
    assert "tracker wandb could not be started" in sender.stderr and "in use" in sender.stderr
    assert list((tmp_path / "tracking/busy/tensorboard").glob("events.out.tfevents.*"))


@pytest.mark.parametrize("exact", [True, False])
def test_steps_trained_again_after_a_resume_that_is_not_exact_are_said_to_differ(tmp_path, exact):
    """A tracker keeps one value per step, so the steps a resumed line trains again are not sent twice; where the
    line's resume is not exact (training_started.exact_resume: CUDA without train.deterministic, vLLM rollouts) they
    differ from what it shows, and it says so in a note."""
    from conftest import training_started_fields

    from rc1.core.workspace import Workspace
    from rc1.run import events as ev
    from rc1.views.trackers import TensorBoard

    ws = Workspace(root=tmp_path, run="local")
    tracker = TensorBoard(ws, TensorBoard.new_run(ws))
    seq = iter(range(100))

    def step(n: int, loss: float) -> ev.TrainStep:
        return ev.TrainStep(
            seq=next(seq), step=n, loss=loss, kl=0.0, ratio=1.0, lr=1e-5, reward=0.5, mem_used_mb=1.0, sec_per_step=1.0,
            tokens=10,
        )  # fmt: skip

    tracker.send(ev.TrainingStarted(seq=next(seq), **training_started_fields(0, 6), exact_resume=exact))
    for n in range(1, 5):
        tracker.send(step(n, loss=1.0))
    resumed = training_started_fields(2, 6) | {"resume_from_dir": "checkpoints/local/step_00002"}
    tracker.send(ev.TrainingStarted(seq=next(seq), **resumed, exact_resume=exact))
    for n in range(3, 7):
        tracker.send(step(n, loss=2.0))
    tracker.finish()

    line = EventAccumulator(str(tmp_path / tracker.run_id / "seed_1234")).Reload()
    assert [(s.step, s.value) for s in line.Scalars("train/loss")] == [(1, 1), (2, 1), (3, 1), (4, 1), (5, 2), (6, 2)]
    run = EventAccumulator(str(tmp_path / tracker.run_id), size_guidance={"tensors": 0}).Reload()
    notes = [t for t in run.Tags()["tensors"] if t.startswith("resume")]
    assert bool(notes) is not exact
    if not exact:
        (note,) = [event.tensor_proto.string_val[0].decode() for event in run.Tensors(notes[0])]
        assert "steps 3–4 were trained again and differ" in note and "from step 5 on" in note
