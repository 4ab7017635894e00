"""Replay folds every event type of the union: each has its mutator in rc1/run/replay.py or is named in
CHANGES_NOTHING with why, never both; a type with neither fails replay instead of passing through it unnoticed."""

from __future__ import annotations

import msgspec
import pytest

from rc1.run import events as ev
from rc1.run.projection import Projection
from rc1.run.replay import CHANGES_NOTHING, Replayer, _mutate

NO_MUTATOR = _mutate.registry[object]  # the default: what a type without a mutator of its own dispatches to


def _has_mutator(kind: type[ev.Event]) -> bool:
    return _mutate.dispatch(kind) is not NO_MUTATOR


def test_every_event_type_has_a_mutator_or_is_declared_to_change_nothing():
    neither = [kind.__name__ for kind in ev.EVENT_CLASSES if not _has_mutator(kind) and kind not in CHANGES_NOTHING]
    assert not neither, (
        f"give these a mutator in rc1/run/replay.py, or name them in its CHANGES_NOTHING with why: {neither}"
    )


def test_no_event_type_has_a_mutator_and_is_declared_to_change_nothing():
    both = [kind.__name__ for kind in ev.EVENT_CLASSES if _has_mutator(kind) and kind in CHANGES_NOTHING]
    assert not both, f"these have a mutator in rc1/run/replay.py: take them out of CHANGES_NOTHING: {both}"


def test_changes_nothing_names_event_types_of_the_union_each_with_why():
    assert set(CHANGES_NOTHING) <= set(ev.EVENT_CLASSES)
    assert all(reason.strip() for reason in CHANGES_NOTHING.values())


def test_an_event_declared_to_change_nothing_moves_only_the_envelope():
    replayer = Replayer()
    replayer.apply(ev.ArtifactWritten(seq=0, ts="2026-01-01T00:00:00Z", run="r", path="a", sha256="0" * 64, bytes=1))
    envelope = {"events": 1, "head_seq": 0, "last_ts": "2026-01-01T00:00:00Z", "run": "r"}
    assert replayer.projection == msgspec.structs.replace(Projection(), **envelope)


def test_an_event_type_without_a_mutator_fails_replay_loudly():
    # CheckOutcome is the untagged base of check_passed and check_failed: never written, and folded by no mutator.
    outcome = ev.CheckOutcome(round=1, name="leak", measured={}, thresholds={})
    with pytest.raises(TypeError, match="replay has no mutator for CheckOutcome: register one in rc1/run/replay.py"):
        Replayer().apply(outcome)
