"""Trackers fed from the log: TensorBoard's own reader sees each step exactly once across a SIGKILL and a resume,
and a tracker that fails warns and never stops the run."""

import logging
import os
import signal

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from conftest import events, make_workspace, rc1, rc1_here
from rc1.views.trackers import Trackers


@pytest.mark.e2e
def test_tensorboard_gets_each_step_once_across_a_kill_and_a_resume(tmp_path):
    root = make_workspace(tmp_path, **{"tracking.report_to": ["tensorboard"]})
    killed = rc1(root, "advance", "--all", env={**os.environ, "RC1_KILL_AT": "append:train_step@6"})
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    resumed = rc1_here(root, "advance", "--all")
    assert resumed.returncode == 0, resumed.stderr

    log = events(root)
    attached = [e for e in log if e["type"] == "tracker_attached"]
    assert [(e["backend"], e["run_id"]) for e in attached] == [("tensorboard", "tracking/local/tensorboard")]
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

    report = rc1_here(root, "report")  # the pictures go with the run
    assert report.returncode == 0 and "plots sent to tensorboard (tracking/local/tensorboard)" in report.stdout
    images = EventAccumulator(str(root / "tracking/local/tensorboard"), size_guidance={"images": 0}).Reload()
    assert {"plots/training", "plots/success_by_difficulty", "plots/pool_difficulty"} <= set(images.Tags()["images"])


class Broken:
    name = "broken"

    def send(self, event):
        raise ConnectionError("quota exceeded")

    def config(self, text, seq):
        pass

    def close(self):
        pass


def test_a_tracker_that_fails_warns_once_and_is_left_off(caplog):
    broken = Broken()
    trackers = Trackers([broken])
    with caplog.at_level(logging.WARNING, logger="rc1.tracking"):
        trackers(object())  # never raises
        trackers(object())
    assert [r.getMessage() for r in caplog.records] == [
        "tracker broken failed (ConnectionError: quota exceeded); it is left off for the rest of this command"]
