"""An event carries its own upcasters (`upcast_v<n>_v<n+1>` beside its fields), and the log's version is the newest
of them: a breaking change is one event class's edit and a frozen log of the version before it
(tests/data/schema_v<N>.jsonl, read by tests/unit/test_event_log.py)."""

import pytest
from conftest import REPO

from rc1.run import events as ev


def test_the_upcasters_are_the_event_classes_own():
    assert ev.UPCASTERS == {
        ("eval_completed", 1): ev.EvalCompleted.upcast_v1_v2,
        ("release_evaluated", 2): ev.ReleaseEvaluated.upcast_v2_v3,
    }


def test_the_schema_version_is_one_past_the_newest_upcaster():
    assert ev.SCHEMA_VERSION == 1 + max(version for _, version in ev.UPCASTERS)


def test_every_older_version_has_its_frozen_log():
    missing = [v for v in range(1, ev.SCHEMA_VERSION) if not (REPO / f"tests/data/schema_v{v}.jsonl").exists()]
    assert not missing, f"freeze a `make run` log written at each of these versions before the bump: {missing}"


def test_an_upcaster_that_skips_a_version_is_refused_when_the_events_load():
    class Skips:
        @staticmethod
        def upcast_v1_v3(raw: dict) -> dict:
            return raw

    with pytest.raises(TypeError, match="Skips.upcast_v1_v3: an upcaster reads one version into the next"):
        ev._upcasters((Skips,))


def test_an_upcast_line_is_read_in_todays_shape():
    line = {"type": "eval_completed", "v": 1, "accuracy": 0.5, "per_task_accuracy": {"gsm8k": 0.5}}
    upcast = ev.upcast(line)
    assert upcast["v"] == ev.SCHEMA_VERSION and upcast["success"] == 0.5 and "accuracy" not in upcast
