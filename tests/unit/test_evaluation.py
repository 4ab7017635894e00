"""Evaluation by difficulty and the RC1 release gate: buckets computed from scored replies, the gain of
the hard bucket over step 0, and best/ promotion, checked against values computed here by hand."""

import msgspec
import pytest

from rc1.app.release import release_event, selected_checkpoint
from rc1.core.errors import TrainingError
from rc1.data.task import TaskItem
from rc1.run import events as ev
from rc1.run.replay import replay
from rc1.scoring.evaluation import evaluate_buckets, hard_success
from rc1.scoring.pipeline import Scored
from rc1.scoring.release_stats import select_checkpoint


def _item(i: int, task: str, difficulty: str, needs_clarification: bool = False, turns: int = 1) -> TaskItem:
    from rc1.data.task import Turn

    return TaskItem(
        id=f"{task}-{i}",
        task=task,
        question="q",
        answer="a",
        difficulty=difficulty,
        prompt="q",
        needs_clarification=needs_clarification,
        turns=[Turn(role="user", content="q")] * turns,
    )


def _scored(correct: float, asks: int = 0) -> Scored:
    return Scored(components={"correctness": correct, "f1": correct, "format": 1.0, "length": 1.0}, clarifications=asks)


ITEMS = [
    _item(0, "hotpotqa", "hard", turns=3),
    _item(1, "hotpotqa", "hard", turns=2),
    _item(2, "hotpotqa", "easy"),
    _item(3, "strategyqa", "hard", turns=2),
    _item(4, "gsm8k", "hard", turns=3),
    _item(5, "gsm8k", "medium"),
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


def test_hard_success_counts_hard_items_of_the_release_tasks_only():
    correct = [s.components["correctness"] for s in SCORED]
    assert hard_success(ITEMS, correct, ["hotpotqa", "strategyqa"]) == pytest.approx(
        1 / 3
    )  # hotpot 1 of 2, strategyqa 0 of 1
    assert hard_success(ITEMS, correct, ["gsm8k"]) == pytest.approx(SCORED[4].components["correctness"])
    assert hard_success(ITEMS, correct, ["nothing"]) is None


def test_sampled_success_is_reported_beside_greedy_per_bucket():
    rates = [0.5, 0.25, 0.0, 0.75, 1.0, 0.0, 0.125]
    buckets = {(b.task, b.difficulty): b for b in evaluate_buckets(ITEMS, SCORED, REWARDS, sampled=rates)}
    assert buckets[("hotpotqa", "hard")].sampled_success == pytest.approx(0.375)
    assert buckets[("all", "all")].sampled_success == pytest.approx(sum(rates) / 7)
    assert all(b.sampled_success is None for b in evaluate_buckets(ITEMS, SCORED, REWARDS))


def _gate(
    which: str,
    sampled: list[int],
    *,
    samples: int = 8,
    step: int = 0,
    ids: list[str] | None = None,
    greedy: list[int] | None = None,
) -> ev.GateSetEvaluated:
    ids = ids or [f"gate-hotpotqa-{i:06d}" for i in range(len(sampled))]
    greedy = greedy or [0] * len(sampled)
    return ev.GateSetEvaluated(
        policy=which,
        step=step,
        checkpoint=None if which == "base" else f"c/step_{step:05d}",
        selected_by="" if which == "base" else "best",
        gate_sha256="g" * 64,
        samples=samples,
        temperature=1.0,
        generation_seed=4242,
        item_ids=ids,
        sampled=sampled,
        greedy=greedy,
        sampled_success=sum(sampled) / (samples * len(sampled)),
        greedy_success=sum(greedy) / len(sampled),
    )


def test_the_release_verdict_is_the_paired_gain_on_the_gate_set_with_its_interval():
    base = _gate("base", [0, 1, 2, 0, 1, 0, 2, 1] * 25)  # 200 items
    better = _gate("selected", [k + 2 for k in base.sampled], step=30)  # every item +2 of 8 samples: +25 pp
    event = release_event(base, better, 5.0, "hard_sampled_success", 1234)
    assert event.passed and not event.failed
    assert (event.n, event.samples, event.step, event.selected_by, event.items) == (200, 8, 30, "best", "gate")
    assert event.hard_gain_pp == pytest.approx(25.0) and event.ci_low_pp == pytest.approx(25.0)
    assert event.selected_success - event.baseline_success == pytest.approx(0.25)


def test_a_gain_below_the_threshold_or_an_interval_reaching_zero_does_not_pass_and_says_why():
    base = _gate("base", [1, 2, 3, 4] * 50)
    small = _gate("selected", [k + (i % 8 == 0) for i, k in enumerate(base.sampled)], step=10)  # +1.6 pp
    event = release_event(base, small, 5.0, "hard_success", 1)
    assert not event.passed and event.failed == [f"the gain {event.hard_gain_pp:+.1f} pp is below the threshold 5 pp"]
    noisy = _gate("selected", [k + (1, -1, 0, 0)[i % 4] for i, k in enumerate(base.sampled)], step=10)  # mean 0, spread
    event = release_event(base, noisy, 0.0, "hard_success", 1)
    assert not event.passed and event.ci_low_pp <= 0 < event.ci_high_pp
    assert event.failed == [
        f"the 95 % interval [{event.ci_low_pp:+.1f}, {event.ci_high_pp:+.1f}] pp does not lie above 0"
    ]


def test_the_verdict_refuses_evaluations_of_different_gate_items():
    base = _gate("base", [1, 2, 3])
    other = _gate("selected", [1, 2, 3], ids=["gate-x-1", "gate-x-2", "gate-x-3"])
    with pytest.raises(TrainingError, match="not of the same items"):
        release_event(base, other, 5.0, "hard_success", 1)


def _log(evals: list[tuple[int, float]], best: list[int]) -> list[ev.Event]:
    """A run's evaluations, checkpoints and promotions as the log holds them (`hard` success per evaluated step)."""
    fp = ev.Fingerprints(pool="p", shadow="s", config="c", weights="w")
    log: list[ev.Event] = [
        ev.Round1Passed(fingerprints=fp, checks=[]),
        ev.Round2Passed(fingerprints=fp, checks=[]),
        ev.TrainingStarted(
            resume_from_step=0,
            resume_from_dir=None,
            max_steps=evals[-1][0],
            engine="trl",
            strategy="grpo",
            model="m",
            device="cpu",
            dtype="float32",
        ),
    ]
    for step, hard in evals:
        bucket = ev.EvalBucket(
            task="all", difficulty="all", n=10, success=hard, mean_reward=hard, overclar_rate=0.0, avg_turns=1.0
        )
        if step:
            log.append(
                ev.TrainStep(
                    step=step,
                    loss=0.0,
                    kl=0.0,
                    ratio=1.0,
                    lr=0.0,
                    reward=0.0,
                    mem_used_mb=0.0,
                    sec_per_step=0.0,
                    tokens=0,
                )
            )
            log.append(ev.CheckpointSaved(step=step, dir=f"checkpoints/r/step_{step:05d}", files={}))
        log.append(
            ev.EvalCompleted(
                step=step,
                n=10,
                mean_reward=hard,
                success=hard,
                per_task_success={},
                buckets=[bucket],
                hard_success=hard,
            )
        )
        if step in best:
            log.append(
                ev.BestPromoted(step=step, dir=f"checkpoints/r/best/step_{step:05d}", metric="hard_success", value=hard)
            )
    return [msgspec.structs.replace(e, seq=i) for i, e in enumerate(log)]


@pytest.mark.parametrize(
    "evals, best, chosen, how",
    [
        ([(0, 0.20), (10, 0.30), (20, 0.25)], [10], 10, "best"),
        ([(0, 0.20), (10, 0.30), (20, 0.35)], [10, 20], 20, "best"),
        ([(0, 0.20), (10, 0.10), (20, 0.20)], [], 20, "final"),  # nothing beat step 0: the final checkpoint is measured
    ],
)
def test_the_gate_set_measures_the_checkpoint_the_shadow_set_chose(evals, best, chosen, how):
    projection = replay(_log(evals, best)).projection
    ref, selected_by = selected_checkpoint(projection, projection.checkpoints[-1])
    assert (ref.step, selected_by) == (chosen, how)
    assert select_checkpoint(evals, evals[-1][0]) == (chosen, how)  # the rule best/ is promoted by, as a pure function
