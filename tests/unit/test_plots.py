"""The run's plots (rc1/views/plots.py) and what decides them (rc1/views/plot_series.py): drawn from real events into
a workspace under tmp_path; the panels, the smoothing, the zoomed limits and the verdict's words checked as values."""

import math
import random

import matplotlib
import msgspec
import pytest
from conftest import training_started_fields
from matplotlib.figure import Figure

from rc1.core.workspace import Workspace
from rc1.data.task import TaskItem, write_items
from rc1.run import events as ev
from rc1.views.plot_series import (
    kl_measured,
    lines_of_training,
    run_name,
    smooth,
    smoothing_window,
    training_panels,
    verdict_label,
    zoomed_limits,
)
from rc1.views.plots import draw_all, draw_verdict

RUN = "exp7"
SHADOW = {"easy": 0.2, "medium": 0.1, "hard": 0.02, "all": 0.11}  # step 0's success; every value lies in [0.02, 0.2]


def _step(step: int, *, kl: float = 0.0, kl_coef: float = 0.0, rng: random.Random | None = None, **fields):
    noise = (rng or random.Random(step)).gauss(0, 0.05)
    return ev.TrainStep(
        run=RUN,
        step=step,
        loss=0.1 + noise,
        kl=kl,
        kl_coef=kl_coef,
        ratio=1.0,
        lr=1e-5,
        reward=0.2 + step / 400 + noise,
        mem_used_mb=900.0,
        sec_per_step=0.5,
        tokens=100 + step,
        components={"correctness": 0.1 + noise, "format": 0.6},
        diagnostics={"entropy": 3.0 - step / 100, "clip_ratio": 0.0, "frac_reward_zero_std": 0.25},
        **fields,
    )


def _evaluation(step: int) -> ev.EvalCompleted:
    lift = step / 1000  # stays inside [0.02, 0.2] over 40 steps
    buckets = [
        ev.EvalBucket(
            task="all",
            difficulty=d,
            n=30,
            success=min(0.2, s + lift),
            mean_reward=0.3,
            overclar_rate=0.0,
            avg_turns=1.0,
            sampled_success=min(0.2, s + lift / 2),
        )
        for d, s in SHADOW.items()
    ]
    return ev.EvalCompleted(
        run=RUN,
        step=step,
        n=30,
        mean_reward=0.3,
        success=SHADOW["all"] + lift,
        per_task_success={"gsm8k": 0.1},
        buckets=buckets,
        hard_success=0.05,
        hard_sampled_success=0.04,
        samples=8,
    )


def _release(passed: bool) -> ev.ReleaseEvaluated:
    return ev.ReleaseEvaluated(
        run=RUN,
        step=20,
        selected_by="best",
        n=60,
        samples=8,
        baseline_success=0.10,
        selected_success=0.17 if passed else 0.11,
        hard_gain_pp=7.0 if passed else 1.0,
        ci_low_pp=5.5 if passed else -0.6,
        ci_high_pp=8.5 if passed else 2.6,
        threshold_pp=5.0,
        passed=passed,
        failed=[] if passed else ["the gain +1.0 pp is below the threshold 5 pp"],
        metric="sampled_success",
        seed=1234,
    )


def _run(steps: int = 40, *, kl_coef: float = 0.0, passed: bool = False) -> list[ev.Event]:
    rng = random.Random(7)
    started = ev.RunStarted(
        run=RUN,
        config_path="configs/local.yaml",
        config_sha256="c" * 64,
        code_version="0",
        packages={},
        host="h",
        device="cpu",
        python="3.12",
    )
    events: list[ev.Event] = [started, ev.TrainingStarted(run=RUN, **training_started_fields(max_steps=steps))]
    events.append(_evaluation(0))
    for step in range(1, steps + 1):
        events.append(_step(step, kl=0.01 * step if kl_coef else 0.0, kl_coef=kl_coef, rng=rng, grad_norm=1.0))
        if step % 10 == 0:
            events.append(_evaluation(step))
        if step == 20:
            events.append(ev.BestPromoted(run=RUN, step=20, dir="checkpoints/best/step_00020", metric="x", value=0.2))
    return events + [_release(passed)]


def _titles(steps: list[ev.TrainStep]) -> list[str]:
    return [panel.title for panel in training_panels({1234: steps})[0]]


def test_the_kl_panel_is_drawn_only_where_kl_was_measured():
    unmeasured = [_step(s) for s in range(1, 9)]  # β 0: TRL records 0
    panels, notes = training_panels({1234: unmeasured})
    assert not any("KL" in panel.title for panel in panels)
    assert any("KL" in note and "not measured" in note for note in notes)
    assert not kl_measured([_step(1, kl=math.nan, kl_coef=0.04)])  # a NaN KL measures nothing

    measured = [_step(s, kl=0.01 * s, kl_coef=0.04) for s in range(1, 9)]
    [kl] = [panel for panel in training_panels({1234: measured})[0] if "KL" in panel.title]
    assert kl.series == {"": [(s, 0.01 * s) for s in range(1, 9)]}


def test_a_panel_whose_series_is_never_recorded_is_left_out_with_a_note():
    bare = [
        ev.TrainStep(
            step=s, loss=0.1, kl=0.0, ratio=1.0, lr=1e-5, reward=0.2, mem_used_mb=1.0, sec_per_step=1.0, tokens=10
        )
        for s in range(1, 6)
    ]
    panels, notes = training_panels({None: bare})
    assert [p.title for p in panels] == [
        "reward (mean over the step's completions)",
        "loss",
        "completion tokens per step",
    ]
    assert {n.split(":")[0] for n in notes} == {
        "KL to the reference",
        "gradient norm",
        "entropy",
        "reward components",
        "trainer diagnostics",
    }
    assert "gradient norm (before clipping)" in _titles([_step(s, grad_norm=1.0) for s in range(1, 6)])


def test_two_seeds_draw_one_series_each_and_the_parts_of_the_last():
    lines = {1: [_step(s) for s in range(1, 6)], 2: [_step(s) for s in range(1, 4)]}
    panels = {p.title: p for p in training_panels(lines)[0]}
    assert set(panels["loss"].series) == {"seed 1", "seed 2"}
    parts = panels["reward components (mean over the step's completions) (seed 2)"]
    assert set(parts.series) == {"correctness", "format", "penalty"} and len(parts.series["format"]) == 3


def test_lines_of_training_start_over_and_drop_steps_a_resume_trains_again():
    fields = training_started_fields
    events = [ev.TrainingStarted(**fields(seed=1)), *(_step(s) for s in range(1, 7))]
    events += [ev.TrainingStarted(**fields(step=4, seed=1)), _step(5, grad_norm=2.0)]  # a rollback to step 4
    events += [ev.TrainingStarted(**fields(seed=2)), _step(1)]
    lines = lines_of_training(events)
    assert [s.step for s in lines[1]] == [1, 2, 3, 4, 5] and lines[1][-1].grad_norm == 2.0
    assert [s.step for s in lines[2]] == [1]
    events += [ev.TrainingStarted(**fields(seed=1)), _step(1)]  # seed 1 starts over from the base
    assert [s.step for s in lines_of_training(events)[1]] == [1]


def test_smoothing_is_a_centred_rolling_mean_over_about_a_tenth_of_the_steps():
    assert smooth([0.0, 3.0, 6.0, 9.0], 3) == [1.5, 3.0, 6.0, 7.5]
    assert smooth([1.0, 5.0, 2.0], 1) == [1.0, 5.0, 2.0]
    assert smooth([0.0, 0.0, 10.0, 0.0, 0.0], 5) == [10 / 3, 2.5, 2.0, 2.5, 10 / 3]
    assert [smoothing_window(n) for n in (3, 12, 100, 1000)] == [1, 3, 11, 101]


def test_a_million_steps_are_smoothed_in_the_memory_of_the_series():
    """`rc1 report` on a run of a million steps: the window is 100,001 points, and a mean per step over a slice of
    its own took every byte of a 24 GiB machine (killed); the running sum keeps it to the series."""
    values = [float(i % 7) + (i % 13) / 10 for i in range(1_000_000)]
    window = smoothing_window(len(values))
    smoothed = smooth(values, window)
    assert window == 100_001 and len(smoothed) == len(values)
    for i in (0, 1, 50_000, 500_000, 999_999):
        around = values[max(0, i - window // 2) : i + window // 2 + 1]
        assert math.isclose(
            smoothed[i], math.fsum(around) / len(around), rel_tol=1e-9
        )  # a running sum over 1M values: a plot cannot show 1e-9


def test_the_success_axis_is_zoomed_to_the_data_not_zero_to_one():
    low, high = zoomed_limits([0.02, 0.05, 0.2, 0.11], min_span=0.05, within=(0.0, 1.0))
    assert 0.0 <= low < 0.02 and 0.2 < high <= 0.25
    low, high = zoomed_limits([0.0, 0.0], min_span=0.05, within=(0.0, 1.0))  # all failed: 5 pp above 0
    assert -0.01 < low < 0 and 0.05 < high < 0.06
    assert zoomed_limits([3.0, 3.0]) == pytest.approx((2.826, 3.174))  # a constant: a tenth of its size, padded
    assert zoomed_limits([-2.0, 2.0], margin=0.25) == (-3.0, 3.0)


@pytest.mark.parametrize("passed, word", [(False, "FAILED"), (True, "PASSED")])
def test_the_verdict_is_drawn_as_its_interval_against_zero_and_the_threshold(passed, word):
    release = _release(passed)
    ax = Figure().subplots()
    draw_verdict(ax, release)
    other = "PASSED" if word == "FAILED" else "FAILED"
    assert ax.get_title().startswith(f"release {word}") and other not in ax.get_title()
    assert ("below the threshold" in ax.get_title()) is not passed  # a failed verdict says why
    [bar] = ax.containers[0].lines[2]  # the error bar: from the interval's low end to its high end
    [[(x_low, _), (x_high, _)]] = bar.get_segments()
    assert (x_low, x_high) == pytest.approx((release.ci_low_pp, release.ci_high_pp))
    assert sorted(line.get_xdata()[0] for line in ax.lines[-2:]) == [0.0, release.threshold_pp]
    low, high = ax.get_xlim()
    assert low < min(0.0, release.ci_low_pp) and high > max(release.ci_high_pp, release.threshold_pp)


def test_the_verdict_label_names_the_word_the_gain_and_its_interval():
    assert verdict_label(_release(False)) == (
        "release FAILED: gain +1.0 pp [-0.6, +2.6] (95 %), threshold +5 pp; step 20 (best) vs step 0, "
        "n = 60 gate items × 8 samples"
    )
    old = msgspec.structs.replace(_release(True), ci_low_pp=None, ci_high_pp=None, samples=0)
    assert "PASSED" in verdict_label(old) and "no interval" in verdict_label(old)


def test_the_run_is_named_from_the_log():
    assert run_name(_run(5), "local") == RUN
    assert run_name([ev.TrainingStarted(**training_started_fields())], "local") == "local"  # no envelope


def test_draw_all_writes_the_three_pictures_and_draws_the_same_bytes_again(tmp_path):
    ws = Workspace(root=tmp_path, run=RUN)
    items = [
        TaskItem(id=f"{task}-{k}", task=task, question="q", answer="1", difficulty=d, prompt="p")
        for k, (task, d) in enumerate((t, d) for t in ("gsm8k", "hotpotqa") for d in ("easy", "medium", "hard"))
    ]
    ws.pool_path.parent.mkdir(parents=True)
    write_items(ws.pool_path, items)
    events = _run(kl_coef=0.04, passed=True)

    drawn = draw_all(ws, events)
    assert [p.name for p in drawn] == ["training.png", "success_by_difficulty.png", "pool_difficulty.png"]
    for path in drawn:
        assert path.parent == ws.reports_dir / "plots"
        image = matplotlib.image.imread(path)
        assert image.ndim == 3 and image.shape[0] > 300 and image.shape[1] > 400, path.name
        assert image[..., :3].std() > 0.05, path.name  # something is drawn, not a blank page
    first = [p.read_bytes() for p in drawn]
    assert [p.read_bytes() for p in draw_all(ws, events)] == first
    assert b"Matplotlib" not in first[0]  # no version chunk: the bytes do not depend on matplotlib's version


def test_a_log_with_no_training_and_no_pool_draws_nothing(tmp_path):
    assert draw_all(Workspace(root=tmp_path, run=RUN), _run(5)[:2]) == []
