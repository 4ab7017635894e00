"""Calibration's statistics (rc1/scoring/calibration.py) on replies built here: a component that is success, one
that is noise, weights that keep the weights file's rules, and halves that are fitted and measured apart."""

import json
import subprocess
import sys

import numpy as np
import pytest

from rc1.scoring.calibration import FIT, HELD_OUT, Reply, Resampling, calibrate, half_of, rounded, success_of
from rc1.scoring.weights import read_weights

ITEMS = [f"item-{i:03d}" for i in range(40)]
JUDGE = "judge"
RESAMPLES = 500  # fewer than the command draws (2000): enough for what these tests ask


def _replies(component, samples: int = 5, seed: int = 0) -> list[Reply]:
    """`samples` replies per item, success 0/1 at random; `component(rng, item, success)` gives the components."""
    rng = np.random.default_rng(seed)
    replies = []
    for item in ITEMS:
        for _ in range(samples):
            success = float(rng.random() < 0.4)
            replies.append(Reply(item, False, success, component(rng, item, success)))
    return replies


def _by_name(found):
    return {c.name: c for c in found.components}


def test_success_is_counted_as_the_evaluation_counts_it():
    assert success_of(True, {"correctness": 0.6}) == 0.6  # eval_completed.item_greedy: the component as scored
    assert success_of(False, {"correctness": 0.6}) == 1.0  # item_sampled counts round(correctness)
    assert success_of(False, {"correctness": 0.4}) == 0.0


def test_a_component_that_is_success_correlates_1_narrowly_and_noise_covers_0():
    replies = _replies(lambda rng, item, s: {"correctness": s, "noise": float(rng.random())})
    found = _by_name(
        calibrate(
            replies, {"correctness": 0.5, "noise": 0.5}, judge=JUDGE, resampling=Resampling(seed=1, resamples=RESAMPLES)
        )
    )

    same = found["correctness"].with_success
    assert same.value == pytest.approx(1.0) and same.high - same.low < 1e-6
    assert same.n_items == len(ITEMS) and same.n_replies == len(replies)
    noise = found["noise"].with_success
    assert noise.low < 0 < noise.high and abs(noise.value) < 0.2
    assert found["noise"].with_judge is None  # no judge scored these replies


def test_the_interval_resamples_items_not_replies():
    """Ten copies of each reply are no more evidence than one: the interval comes from resampling the items."""

    def component(rng, item, s):
        return {"correctness": s, "signal": float(s * 0.3 + rng.random())}

    once = _replies(component, samples=1)
    tenfold = [r for r in once for _ in range(10)]
    weights = {"correctness": 0.5, "signal": 0.5}
    a = _by_name(calibrate(once, weights, judge=JUDGE, resampling=Resampling(seed=3, resamples=RESAMPLES)))[
        "signal"
    ].with_success
    b = _by_name(calibrate(tenfold, weights, judge=JUDGE, resampling=Resampling(seed=3, resamples=RESAMPLES)))[
        "signal"
    ].with_success
    assert a.value == pytest.approx(b.value)
    assert b.high - b.low > 0.7 * (a.high - a.low)  # resampling replies would narrow it by about √10
    assert b.n_items == a.n_items == len(ITEMS) and b.n_replies == 10 * a.n_replies


def test_the_correlation_with_the_judge_is_on_the_replies_it_scored():
    replies = _replies(lambda rng, item, s: {"correctness": s, "format": float(rng.random() < 0.5)})
    judged = [
        Reply(r.item_id, True, r.success, {**r.components, JUDGE: r.components["format"]}) for r in replies[::5]
    ]  # one greedy reply per item, the judge agreeing with format exactly
    found = _by_name(
        calibrate(
            replies + judged,
            {"correctness": 0.5, "format": 0.3, JUDGE: 0.2},
            judge=JUDGE,
            resampling=Resampling(seed=0, resamples=RESAMPLES),
        )
    )
    assert found["format"].with_judge.value == pytest.approx(1.0)
    assert found["format"].with_judge.n_replies == len(judged)
    assert found[JUDGE].with_judge is None and found[JUDGE].with_success.n_replies == len(judged)
    assert found["format"].with_success.n_replies == len(replies) + len(judged)


def test_suggested_weights_obey_the_weights_files_rules(tmp_path):
    def component(rng, item, s):
        return {
            "correctness": s,
            "f1": float(np.clip(s * 0.8 + rng.normal(0, 0.2), 0, 1)),
            "format": float(rng.random() < 0.5 + 0.3 * s),
            "length": float(rng.random()),
            "echo": float(rng.random() < 0.5),
        }

    current = {"correctness": 0.5, "f1": 0.15, "format": 0.2, "length": 0.1, "echo": 0.05}
    found = calibrate(_replies(component), current, judge=JUDGE, resampling=Resampling(seed=0, resamples=RESAMPLES))
    suggested = found.suggested_weights
    assert suggested is not None and set(suggested) == set(current)
    path = tmp_path / "weights.json"
    path.write_text(json.dumps(suggested))
    assert read_weights(path, tuple(current)) == (suggested, [])  # none negative, none above 0.5, sum 1
    assert suggested["correctness"] == 0.5 and suggested["f1"] > suggested["length"]
    assert [c.suggested_weight for c in found.components] == [suggested[n] for n in current]


def test_weights_are_fitted_on_one_half_of_the_items_and_measured_on_the_other():
    """On the fit half `a` is success and `b` noise; on the held-out half the other way round. Fitted on the fit half
    alone, the weights back `a`; fitted on every item they would back both alike."""

    def component(rng, item, s):
        noise = float(rng.random() < 0.5)
        return {"a": s, "b": noise, "c": 0.0} if half_of(item) == FIT else {"a": noise, "b": s, "c": 0.0}

    replies = _replies(component)
    found = calibrate(
        replies, {"a": 0.4, "b": 0.4, "c": 0.2}, judge=JUDGE, resampling=Resampling(seed=0, resamples=RESAMPLES)
    )
    held = found.held_out
    assert set(held.fit_items).isdisjoint(held.held_out_items)
    assert set(held.fit_items) | set(held.held_out_items) == set(ITEMS)
    assert all(half_of(i) == FIT for i in held.fit_items) and all(half_of(i) == HELD_OUT for i in held.held_out_items)
    assert {half_of(i) for i in ITEMS} == {FIT, HELD_OUT}  # this set of ids does fall on both sides

    assert found.suggested_weights["a"] == 0.5 and found.suggested_weights["b"] < 0.05
    assert held.suggested.n_items == len(held.held_out_items)
    assert held.suggested.value < held.current.value  # measured where `b`, not `a`, tracks success
    assert held.difference.value == pytest.approx(held.suggested.value - held.current.value)
    assert held.difference.high < 0  # paired over the same resampled items: clearly worse there


def test_without_any_success_nothing_is_suggested_and_each_correlation_says_why():
    replies = _replies(lambda rng, item, s: {"correctness": 0.0, "format": float(rng.random() < 0.5)})
    replies = [Reply(r.item_id, r.greedy, 0.0, r.components) for r in replies]
    found = calibrate(
        replies, {"correctness": 0.5, "format": 0.5}, judge=JUDGE, resampling=Resampling(seed=0, resamples=RESAMPLES)
    )
    assert found.suggested_weights is None and found.held_out.suggested is None
    fmt = _by_name(found)["format"].with_success
    assert fmt.value is None and fmt.reason == "success is the same on every reply"
    assert any("no weights suggested" in note for note in found.notes)


def test_rounding_keeps_the_sum_and_the_bounds():
    w = rounded(np.array([0.5, 0.40597231, 0.03871692, 0.0186418, 0.03666897]))
    assert abs(sum(w) - 1) < 1e-9 and w.max() <= 0.5 and w.min() >= 0
    assert list(w) == [0.5, 0.406, 0.039, 0.018, 0.037]  # the unit over 1 comes off the one rounded up most


def test_the_command_loads_scipy_only_when_it_runs():
    """Every command module is imported to build `rc1 --help`'s parser: calibrate's must not bring scipy with it."""
    code = "import sys, rc1.cli.commands.calibrate; print('scipy' in sys.modules)"
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "False"
