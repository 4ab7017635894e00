"""`make bench`'s training part says where a `rc1 train` process's time went, from the events its session appended:
each gap between two events is charged to the later one's kind, a step's gap split into TRL's own `sec_per_step` and
what rc1 did around it, and what lies outside the session's events is start-up and exit."""

import pytest

from rc1.bench.train_time import AROUND_STEPS, OTHER, START_AND_EXIT, STEPS, where_the_time_went
from rc1.run import events as ev


def at(seconds: float) -> str:
    return f"2026-11-29T10:00:{seconds:09.6f}+00:00"


def step(n: int, ts: float, sec: float) -> ev.TrainStep:
    return ev.TrainStep(
        step=n, loss=0.1, kl=0.0, ratio=1.0, lr=1e-5, reward=0.5, mem_used_mb=1.0, sec_per_step=sec, tokens=8, ts=at(ts)
    )


def started(ts: float) -> ev.RunStarted:
    return ev.RunStarted(
        config_path="c", config_sha256="0", code_version="v", packages={}, host="h", device="cpu", python="3", ts=at(ts)
    )


def test_each_gap_is_charged_to_the_event_that_closes_it_and_the_rest_is_start_up():
    evaluated = ev.EvalCompleted(step=1, n=4, mean_reward=0.5, success=0.5, per_task_success={}, ts=at(9.0))
    saved = ev.CheckpointSaved(step=2, dir="d", files={}, ts=at(12.5))
    events = [
        step(1, 0.5, 0.4),  # an older session's: not this process's
        started(2.0),
        step(1, 5.0, 2.5),
        evaluated,
        step(2, 12.0, 2.75),
        saved,
        ev.ArtifactWritten(path="x", sha256="0" * 64, bytes=1, ts=at(13.0)),
    ]
    shares = {share.part: share.seconds for share in where_the_time_went(events, process_seconds=20.0)}
    assert shares[START_AND_EXIT] == pytest.approx(20.0 - 11.0)
    assert shares[STEPS] == pytest.approx(5.25) and shares[AROUND_STEPS] == pytest.approx(3.0 + 3.0 - 5.25)
    assert shares["shadow-set evaluations"] == pytest.approx(4.0) and shares["checkpoints"] == pytest.approx(0.5)
    assert shares[OTHER] == pytest.approx(0.5)
    assert sum(shares.values()) == pytest.approx(20.0)
