"""Evaluation by difficulty and the RC1 release gate: buckets computed from scored replies, the gain of
the hard bucket over step 0, and best/ promotion, checked against values computed here by hand."""

import msgspec
import pytest

from rc1.data.task import TaskItem
from rc1.events import schema as ev
from rc1.events.replay import replay
from rc1.scoring.evaluation import evaluate_buckets, hard_success
from rc1.scoring.pipeline import Scored
from rc1.stages.release import release_event


def _item(i: int, task: str, difficulty: str, needs_clarification: bool = False, turns: int = 1) -> TaskItem:
    from rc1.data.task import Turn

    return TaskItem(id=f"{task}-{i}", task=task, question="q", answer="a", difficulty=difficulty, prompt="q",
                    needs_clarification=needs_clarification, turns=[Turn(role="user", content="q")] * turns)


def _scored(correct: float, asks: int = 0) -> Scored:
    return Scored(components={"correctness": correct, "f1": correct, "format": 1.0, "length": 1.0}, clarifications=asks)


ITEMS = [
    _item(0, "hotpotqa", "hard", turns=3), _item(1, "hotpotqa", "hard", turns=2), _item(2, "hotpotqa", "easy"),
    _item(3, "strategyqa", "hard", turns=2), _item(4, "gsm8k", "hard", turns=3), _item(5, "gsm8k", "medium"),
    _item(6, "strategyqa", "medium", needs_clarification=True),
]
SCORED = [_scored(1), _scored(0, asks=2), _scored(1), _scored(0), _scored(1), _scored(0, asks=1), _scored(1, asks=1)]
REWARDS = [0.9, 0.1, 0.8, 0.2, 0.95, 0.05, 0.7]


def test_buckets_report_success_reward_overclarification_and_turns_per_cell():
    buckets = {(b.task, b.difficulty): b for b in evaluate_buckets(ITEMS, SCORED, REWARDS)}
    hotpot_hard = buckets[("hotpotqa", "hard")]
    assert (hotpot_hard.n, hotpot_hard.success, hotpot_hard.avg_turns) == (2, 0.5, 2.5)
    assert hotpot_hard.mean_reward == pytest.approx(0.5) and hotpot_hard.overclar_rate == 0.5
    hard = buckets[("all", "hard")]
    assert (hard.n, hard.success) == (4, 0.5) and hard.overclar_rate == 0.25
    overall = buckets[("all", "all")]
    assert overall.n == 7 and overall.success == pytest.approx(4 / 7) and overall.mean_reward == pytest.approx(3.7 / 7)
    # Asking is right for the under-specified item: it does not count as over-clarification.
    assert overall.overclar_rate == pytest.approx(2 / 6)
    assert buckets[("strategyqa", "medium")].overclar_rate == 0.0
    assert ("gsm8k", "easy") not in buckets  # no such item, no empty cell
    assert all(b.delta_pp is None for b in buckets.values())


def test_delta_pp_is_the_change_in_success_since_step_0():
    base = evaluate_buckets(ITEMS, [_scored(0)] * len(ITEMS), [0.0] * len(ITEMS))
    later = {(b.task, b.difficulty): b for b in evaluate_buckets(ITEMS, SCORED, REWARDS, base)}
    assert later[("hotpotqa", "hard")].delta_pp == pytest.approx(50.0)
    assert later[("all", "all")].delta_pp == pytest.approx(100 * 4 / 7)


def test_hard_success_counts_hard_hotpotqa_and_strategyqa_only():
    assert hard_success(ITEMS, SCORED) == pytest.approx(1 / 3)  # hotpot 1 of 2, strategyqa 0 of 1; gsm8k left out


def _log(evals: list[tuple[int, float]], best: list[int]) -> list[ev.Event]:
    """A run's evaluations and promotions as the log holds them (`hard` success per evaluated step)."""
    log: list[ev.Event] = []
    for step, hard in evals:
        bucket = ev.EvalBucket(task="all", difficulty="all", n=10, success=hard, mean_reward=hard, overclar_rate=0.0,
                               avg_turns=1.0)
        log.append(ev.EvalCompleted(step=step, n=10, mean_reward=hard, success=hard, per_task_success={},
                                    buckets=[bucket], hard_success=hard))
        if step in best:
            log.append(ev.BestPromoted(step=step, dir=f"checkpoints/r/best/step_{step:05d}", metric="hard_success", value=hard))
    return [msgspec.structs.replace(e, seq=i) for i, e in enumerate(log)]


@pytest.mark.parametrize("evals, best, threshold, passed, gain, step", [
    ([(0, 0.20), (10, 0.30), (20, 0.25)], [10], 5.0, True, 10.0, 10),
    ([(0, 0.20), (10, 0.23), (20, 0.21)], [10], 5.0, False, 3.0, 10),
    ([(0, 0.20), (10, 0.10), (20, 0.20)], [], 0.0, False, 0.0, None),  # nothing beat step 0: closed at any threshold
])
def test_the_release_gate_is_computed_from_the_evaluations_in_the_log(evals, best, threshold, passed, gain, step):
    projection = replay(_log(evals, best)).projection
    event = release_event(projection, threshold, "hard_success")
    assert (event.passed, event.step) == (passed, step)
    assert event.hard_gain_pp == pytest.approx(gain) and event.baseline_hard_success == 0.20


def test_no_release_without_a_step_0_evaluation():
    assert release_event(replay(_log([(10, 0.5), (20, 0.6)], [10])).projection, 5.0, "hard_success") is None
