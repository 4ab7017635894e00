"""A monitor's trip reaches every tracker as an alert where the backend has them (W&B `run.alert`, Trackio's alerts),
else as what it does have (MLflow: a tag and a text artifact; TensorBoard: a text), each read back with the backend's
own reader."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from conftest import PATIENCE
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from wandb_log import wandb_history

from rc1.core.workspace import Workspace
from rc1.run import events as ev
from rc1.views.trackers import BACKENDS

TRIP = ev.MonitorTripped(
    seq=1,
    rule="entropy_floor",
    step=6,
    seed=1234,
    measured={"entropy": 0.01},
    threshold={"min_entropy": 0.02},
    window=10,
    action="halt",
    detail="mean entropy 0.0100 over the last 10 steps is below 0.02",
)
STARTED = ev.TrainingStarted(
    seq=0,
    resume_from_step=0,
    resume_from_dir=None,
    max_steps=12,
    engine="trl",
    strategy="grpo",
    model="m",
    device="cpu",
    dtype="float32",
    seed=1234,
    seeds=[1234],
)
TITLE = "entropy_floor halt at step 6"


@pytest.fixture
def alerted(tmp_path, monkeypatch):
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"file:{tmp_path / 'mlruns'}")
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    # W&B's in-process service publishes its address as WANDB_SERVICE; left set, every later `rc1` subprocess of the
    # suite would join this service and find its run ids "in use". Recorded as unset, so the teardown unsets it.
    monkeypatch.delenv("WANDB_SERVICE", raising=False)
    monkeypatch.setenv("TRACKIO_PROJECT", "rc1-alerts")
    ws = Workspace(root=tmp_path, run="alerts")
    ids = {}
    for name, backend in BACKENDS.items():
        ids[name] = backend.new_run(ws)
        tracker = backend(ws, ids[name])
        tracker.send(STARTED)
        tracker.send(TRIP)
        tracker.finish()
    yield tmp_path, ids
    import wandb

    wandb.teardown()  # this process's W&B service ends with the test, not with the suite


def test_a_trip_is_an_alert_in_every_tracker(alerted):
    root, ids = alerted
    texts = EventAccumulator(str(root / ids["tensorboard"]), size_guidance={"tensors": 0}).Reload()
    assert f"alerts/{TITLE}/text_summary" in texts.Tags()["tensors"]

    from mlflow.tracking import MlflowClient

    tags = MlflowClient().get_run(ids["mlflow"]).data.tags
    assert tags["rc1.alert"].startswith(f"ERROR {TITLE}: mean entropy 0.0100")

    folder = next((root / "tracking/alerts/wandb/wandb").glob(f"offline-run-*-{ids['wandb']}"))
    deadline = time.monotonic() + PATIENCE
    alerts = []
    while time.monotonic() < deadline and not alerts:  # W&B's own process writes its file after finish() returns
        log = folder / f"run-{ids['wandb']}.wandb"
        alerts = wandb_history(log, "alert") if log.exists() else []
        time.sleep(0.5)
    assert alerts and alerts[0]["title"] == TITLE and alerts[0]["level"] == "ERROR"

    trackio = subprocess.run(
        [
            sys.executable,
            "-c",
            ("import json; from trackio.api import Api; print(json.dumps(Api().alerts('rc1-alerts', run='alerts')))"),
        ],
        env={**os.environ},
        capture_output=True,
        text=True,
        check=True,
    )
    (alert,) = json.loads(trackio.stdout.splitlines()[-1])
    assert alert["title"] == TITLE and alert["level"] == "error" and alert["step"] == 6
