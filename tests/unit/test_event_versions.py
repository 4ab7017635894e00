"""An event carries its own upcasters (`upcast_v<n>_v<n+1>` beside its fields), and the log's version is the newest
of them: a breaking change is one event class's edit and a frozen log of the version before it
(tests/data/schema_v<N>.jsonl, read by tests/unit/test_event_log.py)."""

import ast

import pytest
from conftest import REPO

from rc1.run import events as ev


def test_the_upcasters_are_the_event_classes_own():
    assert ev.UPCASTERS == {
        ("eval_completed", 1): ev.EvalCompleted.upcast_v1_v2,
        ("release_evaluated", 2): ev.ReleaseEvaluated.upcast_v2_v3,
    }


def _static(node: ast.stmt) -> bool:
    return isinstance(node, ast.FunctionDef) and any(
        getattr(d, "id", "") == "staticmethod" for d in node.decorator_list
    )


def test_every_upcaster_is_a_static_method_of_its_event_class_and_none_lives_elsewhere():
    for (kind, _), upcaster in ev.UPCASTERS.items():
        assert isinstance(vars(ev.EVENT_TYPES[kind])[upcaster.__name__], staticmethod), upcaster.__qualname__
    events = {cls.__name__ for cls in ev.EVENT_CLASSES}
    misplaced = []
    for path in sorted((REPO / "rc1").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        on_an_event = set()
        if path == REPO / "rc1/run/events.py":
            on_an_event = {
                id(item)
                for cls in tree.body
                if isinstance(cls, ast.ClassDef) and cls.name in events
                for item in cls.body
                if _static(item)
            }
        misplaced += [
            f"{path.relative_to(REPO)}:{node.lineno} {node.name}"
            for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef) and ev._UPCASTER.fullmatch(node.name) and id(node) not in on_an_event
        ]
    assert not misplaced, (
        f"make each a static method `upcast_v<n>_v<n+1>` of its tagged event class in rc1/run/events.py: {misplaced}"
    )


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
