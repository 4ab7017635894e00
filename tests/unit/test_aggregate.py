"""The aggregate decides: every event is built by one of its command methods, and a round's verdict, best/ and a
release are decided there from the events in the log (the stages hand it measurements, never verdicts)."""

from __future__ import annotations

import ast
from collections.abc import Collection

import pytest
from conftest import REPO, training_started_fields

from rc1.core.errors import EventRefused
from rc1.run import events as ev
from rc1.run.aggregate import RunAggregate
from rc1.run.replay import Replayer
from rc1.run.verdicts import PairedGain

FP = ev.Fingerprints(pool="p" * 64, shadow="s" * 64, config="c" * 64, weights="w" * 64)
# Where rc1 may build an event, by file and the class or function around the call: RunAggregate, whose command methods
# build every event rc1 writes (and `verdict_event`, the release verdict `rc1 audit --rescore` derives again).
BUILDS_EVENTS = {"rc1/run/aggregate.py": {"RunAggregate"}}
SYNTHETIC = {"rc1/bench"}  # writes synthetic logs to time reading them


def _event_constructions(path, inside: Collection[str] = ()) -> list[str]:
    """Every call of an event class in `path` (`line N: Class`), less those in the classes or functions `inside`."""
    names = {cls.__name__ for cls in ev.EVENT_CLASSES}
    tree = ast.parse(path.read_text(encoding="utf-8"))
    allowed = {
        id(node)
        for scope in ast.walk(tree)
        if isinstance(scope, ast.ClassDef | ast.FunctionDef) and scope.name in inside
        for node in ast.walk(scope)
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and id(node) not in allowed:
            callee = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if callee in names:
                found.append(f"line {node.lineno}: {callee}")
    return found


def test_every_event_is_built_by_the_aggregate():
    outside = {}
    for path in sorted((REPO / "rc1").rglob("*.py")):
        relative = path.relative_to(REPO).as_posix()
        if any(relative.startswith(s) for s in SYNTHETIC):
            continue
        found = _event_constructions(path, BUILDS_EVENTS.get(relative, ()))
        if found:
            outside[relative] = found
    assert not outside, f"build these through a command method of RunAggregate (rc1/run/aggregate.py): {outside}"


def test_each_place_allowed_to_build_events_builds_one():
    """BUILDS_EVENTS stays exact: each class or function it names still builds an event."""
    for relative, inside in BUILDS_EVENTS.items():
        everywhere = _event_constructions(REPO / relative)
        stale = [name for name in sorted(inside) if _event_constructions(REPO / relative, {name}) == everywhere]
        assert not stale, f"{relative}: {stale} build no event any more; take them out of BUILDS_EVENTS"


def _fold(run: RunAggregate, event: ev.Event) -> ev.Event:
    """What the session does with a decided event, less the write: fold it into the run."""
    run.replayer.apply(event)
    return event


def _round_one(run: RunAggregate, outcomes: dict[str, bool]) -> ev.Event:
    for name, passed in outcomes.items():
        _fold(run, run.record_check(1, name, passed, {"x": 1.0}, {"x": 0.5}, "", []))
    return run.conclude_round(1, list(outcomes), FP, ev.ScoringSummary())


def test_a_round_passes_only_when_every_check_it_recorded_passed():
    assert isinstance(_round_one(RunAggregate(Replayer()), {"leak": True, "duplicates": True}), ev.Round1Passed)
    failed = _round_one(RunAggregate(Replayer()), {"leak": True, "duplicates": False})
    assert isinstance(failed, ev.GateFailed) and failed.failures == ["duplicates"]


def test_a_round_verdict_naming_a_check_the_log_has_not_recorded_is_refused():
    run = RunAggregate(Replayer())
    _fold(run, run.record_check(1, "leak", True, {}, {}, "", []))
    with pytest.raises(EventRefused, match=r"names checks the log has not recorded in it \(duplicates\)"):
        run.conclude_round(1, ["leak", "duplicates"], FP, ev.ScoringSummary())


def _training(run: RunAggregate, base_gate: list[int] | None = None) -> None:
    _fold(run, _round_one(run, {"leak": True}))
    if base_gate is not None:  # round 2's release_power: the step-0 policy on the gate set
        _gate(run, "base", 0, base_gate)
    _fold(run, run.conclude_round(2, [], FP, ev.ScoringSummary()))
    _fold(run, run.start_training(**training_started_fields(max_steps=4, seed=7)))


def _evaluation(run: RunAggregate, step: int, hard: float) -> None:
    bucket = ev.EvalBucket(
        task="all", difficulty="all", n=4, success=hard, mean_reward=hard, overclar_rate=0.0, avg_turns=1.0
    )
    _fold(
        run,
        run.record_evaluation(
            step=step, n=4, mean_reward=hard, success=hard, per_task_success={}, buckets=[bucket], hard_success=hard
        ),
    )


def test_best_is_promoted_only_on_an_evaluation_that_beats_every_one_before_it():
    run = RunAggregate(Replayer())
    _training(run)
    _evaluation(run, 0, 0.25)
    _evaluation(run, 2, 0.50)
    assert run.promotion_value(2, "hard_success") == 0.50
    promoted = _fold(run, run.promote_best(2, "checkpoints/best/step_00002", "hard_success", {}))
    assert (promoted.step, promoted.value) == (2, 0.50)
    _evaluation(run, 4, 0.50)  # a tie keeps the older checkpoint
    assert run.promotion_value(4, "hard_success") is None
    with pytest.raises(EventRefused, match="step 4's evaluation does not beat every one before it"):
        run.promote_best(4, "checkpoints/best/step_00004", "hard_success", {})


def _gate(run: RunAggregate, policy: str, step: int, sampled: list[int]) -> None:
    _fold(
        run,
        run.record_gate_set_evaluation(
            policy=policy,
            step=step,
            checkpoint=None if policy == "base" else f"checkpoints/step_{step:05d}",
            selected_by="" if policy == "base" else "best",
            seed=None if policy == "base" else 7,
            gate_sha256="g" * 64,
            samples=4,
            temperature=1.0,
            generation_seed=3,
            item_ids=["a", "b", "c"],
            sampled=sampled,
            greedy=[0, 0, 0],
            sampled_success=sum(sampled) / 12,
            greedy_success=0.0,
        ),
    )


def _gain(gain_pp: float, low_pp: float) -> PairedGain:
    return PairedGain(
        n=3,
        baseline=0.25,
        selected=0.25 + gain_pp / 100,
        gain_pp=gain_pp,
        ci_low_pp=low_pp,
        ci_high_pp=gain_pp + 5,
        confidence=0.95,
        resamples=99,
        seed=3,
    )


def test_the_release_verdict_is_the_rule_applied_to_the_gate_sets_evaluations_in_the_log():
    run = RunAggregate(Replayer())
    _training(run, base_gate=[1, 1, 1])
    with pytest.raises(EventRefused, match="no gate-set evaluation of the step-0 policy and of the selected"):
        run.judge_release(_gain(10.0, 2.0), 5.0, "hard_success")
    _gate(run, "selected", 4, [2, 2, 1])
    passed = run.judge_release(_gain(10.0, 2.0), 5.0, "hard_success")
    assert passed.passed and (passed.step, passed.n, passed.seed, passed.selected_by) == (4, 3, 7, "best")
    below = run.judge_release(_gain(4.0, 2.0), 5.0, "hard_success")
    assert not below.passed and below.failed == ["the gain +4.0 pp is below the threshold 5 pp"]
    straddles = run.judge_release(_gain(10.0, -1.0), 5.0, "hard_success")
    assert not straddles.passed and "does not lie above 0" in straddles.failed[0]
