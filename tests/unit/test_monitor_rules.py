"""Each monitor rule trips, and does not trip, on logged sequences folded by the real replay (pure: seconds)."""

from __future__ import annotations

import math

import msgspec
import pytest
from monitor_logs import Line, rules

from rc1.run import events as ev
from rc1.run.monitors.fold import due
from rc1.run.replay import replay


def rules_and_steps(line: Line) -> list[tuple[str, int, str]]:
    return [(t.rule, t.step, t.action) for t in line.trips]


# -- step rules ----------------------------------------------------------------------------------------------------


def test_entropy_floor_trips_when_the_windows_mean_falls_below_the_floor_and_not_on_one_low_step():
    line = Line(rules(entropy_floor={"min_entropy": 0.05, "window": 5, "max_rise": None}))
    line.steps(10, entropy=0.5)
    line.steps(1, entropy=0.0)  # one collapsed step: the window's mean is 0.4
    line.steps(3, entropy=0.45)
    assert line.trips == []
    line.steps(5, entropy=0.01)  # the window's mean: 0.098 at step 18, 0.01 at step 19
    assert rules_and_steps(line) == [("entropy_floor", 19, "halt")]
    trip = line.trips[0]
    assert trip.measured["entropy"] == pytest.approx(0.01) and trip.threshold == {"min_entropy": 0.05}
    assert trip.window == 5 and "below 0.05" in trip.detail
    assert line.halted and line.replayer.projection.halt.rule == "entropy_floor"


def test_entropy_floor_trips_on_a_sudden_rise_against_the_window_before():
    line = Line(rules(entropy_floor={"min_entropy": 0.01, "window": 4, "max_rise": 3.0}))
    line.steps(8, entropy=0.2)
    line.steps(4, entropy=0.5)  # the window's mean rises to 2.5× the one before: under the ratio
    assert line.trips == []
    line.steps(1, entropy=2.0)  # steps 10-13 against 6-9: 0.875 against 0.275
    assert rules_and_steps(line) == [("entropy_floor", 13, "halt")]
    assert line.trips[0].measured["rise"] == pytest.approx(0.875 / 0.275)


def test_truncation_warns_once_and_again_only_after_it_cleared():
    line = Line(rules(truncation={"max_share": 0.5, "window": 3}))
    line.steps(5, clipped=0.9)
    assert rules_and_steps(line) == [("truncation", 3, "warn")]
    assert not line.halted  # a warn: training goes on
    line.steps(5, clipped=0.9)  # still above: quiet, not said at every step
    assert len(line.trips) == 1
    line.steps(3, clipped=0.0)  # cleared
    line.steps(3, clipped=0.95)  # steps 13-15: 0.63
    assert rules_and_steps(line) == [("truncation", 3, "warn"), ("truncation", 15, "warn")]


def test_sampler_mismatch_reads_nothing_where_no_gap_is_recorded_and_trips_on_a_stale_rollout_model():
    """A line whose engine records no gap (rc1's torch engine): the rule never reads. A line at a healthy gap stays
    quiet; the sync skipped (a stale rollout model, the gap ten times larger) trips it once its window is past the
    healthy steps, and as a halt where the action says so."""
    hf = Line(rules(sampler_mismatch={}))
    hf.steps(20)
    assert hf.trips == []
    line = Line(rules(sampler_mismatch={"max_mean": 0.05, "window": 5}))
    line.steps(20, logp_difference=0.01)
    assert line.trips == []
    line.steps(2, logp_difference=0.3)  # steps 17-21: (4 × 0.01 + 0.3) / 5 = 0.068, the first step of the stale model
    assert rules_and_steps(line) == [("sampler_mismatch", 21, "warn")]
    assert line.trips[0].measured["logp_difference"] == pytest.approx(0.068)
    halting = Line(rules(sampler_mismatch={"max_mean": 0.05, "window": 5, "action": "halt"}))
    halting.steps(10, logp_difference=0.01)
    halting.steps(5, logp_difference=0.3)
    assert rules_and_steps(halting) == [("sampler_mismatch", 11, "halt")] and halting.halted


def test_no_signal_halts_when_nearly_every_group_ties():
    line = Line(rules(no_signal={"max_share": 0.9, "window": 4}))
    line.steps(10, tied=0.6)
    assert line.trips == []
    line.steps(4, tied=1.0)
    assert rules_and_steps(line) == [("no_signal", 14, "halt")]


def test_a_rule_whose_signal_the_engine_does_not_record_reads_nothing_and_never_trips():
    line = Line(rules(entropy_floor={"min_entropy": 0.1, "window": 2}))
    line.steps(10, entropy=None)
    assert line.trips == [] and "entropy_floor" not in line.state.watch.readings


# -- evaluation rules ----------------------------------------------------------------------------------------------

ITEMS = 60


def evaluations(line: Line, rates: list[float], *, every: int = 5, samples: int = 8, **steps) -> None:
    """An evaluation every `every` steps at each success rate (the first at step 0): the first items correct,
    greedily and sampled."""
    for rate in rates:
        if line.state.evals:
            line.steps(every, **steps)
            line.checkpoint()
        correct = round(rate * ITEMS)
        line.evaluate(
            [1.0] * correct + [0.0] * (ITEMS - correct), [samples] * correct + [0] * (ITEMS - correct), samples=samples
        )
        if line.halted:
            return


def test_shadow_regression_halts_after_two_evaluations_significantly_below_the_best():
    line = Line(rules(shadow_regression={}))
    evaluations(line, [0.3, 0.5, 0.45, 0.2])
    assert line.trips == []  # one evaluation below the best is not yet a regression
    evaluations(line, [0.2])
    assert rules_and_steps(line) == [("shadow_regression", 20, "halt")]
    trip = line.trips[0]
    assert trip.measured["greedy_best_step"] == 5 and trip.measured["greedy_gain_pp"] == pytest.approx(-30.0)
    assert trip.measured["items"] == 30  # measured on the half of the items the best was not chosen on
    assert trip.measured["greedy_ci_high_pp"] < 0 and trip.threshold["confidence"] == 0.99


@pytest.mark.parametrize("thinking", [False, True])
def test_a_thinking_lines_greedy_replies_are_a_view_that_halts_nothing(thinking):
    """Greedy success falls from 0.5 to 0.2 while sampled success holds: a regression of the greedy view, which halts
    a line whose policy does not think and is only read for one that does (training_started.thinking)."""
    line = Line(rules(shadow_regression={}), thinking=thinking)
    for greedy in (0.3, 0.5, 0.45, 0.2, 0.2):
        if line.state.evals:
            line.steps(5)
            line.checkpoint()
        correct = round(greedy * ITEMS)
        line.evaluate([1.0] * correct + [0.0] * (ITEMS - correct), [4] * (ITEMS // 2) + [0] * (ITEMS - ITEMS // 2))
    assert rules_and_steps(line) == ([] if thinking else [("shadow_regression", 20, "halt")])


def test_shadow_regression_does_not_trip_on_a_level_run():
    line = Line(rules(shadow_regression={}))
    evaluations(line, [0.3, 0.32, 0.28, 0.31, 0.3, 0.29, 0.33])
    assert line.trips == []


def test_plateau_stops_the_line_when_k_evaluations_bring_no_significant_gain():
    line = Line(rules(plateau={"window": 2}))
    evaluations(line, [0.1, 0.3, 0.5])
    assert line.trips == []  # each evaluation 2 back is clearly below
    evaluations(line, [0.52, 0.53])
    assert rules_and_steps(line) == [("plateau", 20, "stop")]
    assert line.state.stopping is not None and line.state.stopping.rule == "plateau"
    assert line.replayer.projection.state == "CHECKPOINTED"  # a stop ends the line; it is no halt


def test_drift_warns_when_the_intervals_lower_bound_passes_the_ceiling():
    line = Line(rules(drift={"max_kl": 0.5, "window": 1}))
    line.evaluate([0.0] * 10, [0] * 10, drift=(0.0, 0.0, 0.0))
    line.steps(5)
    line.evaluate([0.0] * 10, [0] * 10, drift=(0.6, 0.4, 0.8))  # its interval reaches below 0.5: not yet
    assert line.trips == []
    line.steps(5)
    line.evaluate([0.0] * 10, [0] * 10, drift=(0.9, 0.7, 1.1))
    assert rules_and_steps(line) == [("drift", 10, "warn")]
    assert line.trips[0].measured["ci_low"] == pytest.approx(0.7)


def test_reward_hacking_halts_when_the_policy_learns_to_score_while_shadow_success_falls():
    line = Line(rules(reward_hacking={"window": 1}))
    line.evaluate([1.0] * 30 + [0.0] * 30, [8] * 30 + [0] * 30)
    line.steps(4, reward=0.3)
    line.steps(6, reward=0.6)  # learned to score within the first steps after the evaluation
    line.checkpoint()
    line.evaluate([0.0] * 60, [0] * 60)  # and shadow success went to nothing
    assert rules_and_steps(line) == [("reward_hacking", 10, "halt")]
    trip = line.trips[0]
    assert trip.measured["reward_rise"] > 0.3 and trip.measured["reward_rise_ci_low"] > 0
    assert trip.measured["success_change_pp"] == pytest.approx(-50) and trip.measured["from_step"] == 0


def test_reward_hacking_halts_when_reward_climbs_while_shadow_success_falls():
    line = Line(rules(reward_hacking={"window": 1}))
    line.evaluate([1.0] * 30 + [0.0] * 30, [8] * 30 + [0] * 30)
    line.steps(10, reward=[0.30, 0.32] * 5)  # level: no trend over the steps
    line.checkpoint()
    line.evaluate([1.0] * 30 + [0.0] * 30, [8] * 30 + [0] * 30)
    assert line.trips == []
    line.steps(10, reward=[0.3 + 0.03 * i for i in range(10)])
    line.checkpoint()
    line.evaluate([1.0] * 15 + [0.0] * 45, [8] * 15 + [0] * 45)
    assert rules_and_steps(line) == [("reward_hacking", 20, "halt")]
    trip = line.trips[0]
    assert trip.measured["reward_rise"] == pytest.approx(0.30) and trip.measured["success_change_pp"] == pytest.approx(
        -25
    )
    assert trip.measured["from_step"] == 10


def test_reward_hacking_does_not_trip_when_reward_and_success_rise_together():
    line = Line(rules(reward_hacking={"window": 1}))
    evaluations(line, [0.2, 0.3, 0.5], every=10, reward=[0.3 + 0.02 * i for i in range(10)])
    assert line.trips == []
    assert line.state.watch.readings["reward_hacking"].breach is False


def test_reward_hacking_halts_when_a_component_grows_its_share_while_correctness_does_not():
    line = Line(
        rules(reward_hacking={"window": 2, "max_share_gain": 0.15}), weights={"correctness": 0.5, "padding": 0.5}
    )
    line.evaluate([0.0] * 60, [0] * 60)
    line.steps(6, components={"correctness": 0.4, "padding": 0.1})
    line.checkpoint()
    line.evaluate([0.0] * 60, [0] * 60)
    line.steps(3, components={"correctness": 0.4, "padding": 0.3})
    line.steps(3, components={"correctness": 0.39, "padding": 0.31})
    line.checkpoint()
    line.evaluate([0.0] * 60, [0] * 60)
    assert rules_and_steps(line) == [("reward_hacking", 12, "halt")]
    trip = line.trips[0]
    # padding's share went from 0.2 to about 0.44 over the 12 steps; correctness's trend is below 0
    assert trip.measured["padding_share_gain"] > 0.15 and trip.measured["correctness_change"] < 0


# -- budget --------------------------------------------------------------------------------------------------------


def test_budget_halts_before_the_next_step_would_pass_the_judge_call_limit():
    line = Line(rules(budget={"line": {"judge_calls": 100}, "window": 3}))
    line.steps(3, judge_calls=20)
    assert line.trips == []  # 60 + 20 ahead: within
    line.steps(1, judge_calls=20)  # 80 + 20: exactly the limit
    assert line.trips == []
    line.steps(1, judge_calls=20)  # 100 + 20 would pass it
    assert rules_and_steps(line) == [("budget", 5, "halt")]
    assert line.trips[0].measured == {"judge_calls": 100.0, "next_step": 20.0, "share_of_limit": 1.2}
    assert line.state.line_spend.judge_calls == 100  # the limit itself was not passed


def test_budget_counts_wall_hours_from_the_events_timestamps_and_accelerators_per_process():
    line = Line(rules(budget={"run": {"wall_hours": 1.0}}), device="cuda", processes=4)
    line.steps(13, seconds=300.0)  # after step 12 the hour is spent, and the next step would pass it
    assert rules_and_steps(line) == [("budget", 12, "halt")]
    spend = line.state.run_spend
    assert spend.wall_hours == pytest.approx(1.0) and spend.accelerator_hours == pytest.approx(4.0)


def test_spend_is_kept_without_any_budget_and_a_new_session_does_not_count_the_gap():
    line = Line(rules())
    line.steps(2, judge_calls=3, seconds=60.0)
    line.append(
        ev.RunStarted(
            config_path="c", config_sha256="s", code_version="v", packages={}, host="h", device="cpu", python="3"
        ),
        seconds=7200.0,
    )  # a new session, two hours later
    line.start(2)
    line.steps(1, judge_calls=3, seconds=60.0)
    spend = line.state.run_spend
    assert spend.judge_calls == 9 and spend.wall_hours == pytest.approx(3 / 60, abs=1e-4)


# -- what a check records ------------------------------------------------------------------------------------------


def test_warns_come_first_and_at_most_one_trip_ends_training_at_a_check():
    line = Line(
        rules(
            truncation={"max_share": 0.1, "window": 2},
            no_signal={"max_share": 0.5, "window": 2},
            entropy_floor={"min_entropy": 0.1, "window": 2, "max_rise": None},
        )
    )
    line.steps(2, entropy=0.0, clipped=1.0, tied=1.0)
    assert rules_and_steps(line) == [("truncation", 2, "warn"), ("entropy_floor", 2, "halt")]


def test_a_resumed_line_trips_at_the_step_the_uninterrupted_line_did():
    def run(kill_at: int | None) -> list[tuple[str, int, str]]:
        line = Line(rules(entropy_floor={"min_entropy": 0.1, "window": 6, "max_rise": None}))
        values = [0.5] * 10 + [0.05] * 10
        for step, value in enumerate(values, start=1):
            line.steps(1, entropy=value)
            if line.halted:
                break
            if step % 4 == 0:
                line.checkpoint()
            if step == kill_at:  # killed here: the next session resumes from the newest checkpoint
                line.start(step - step % 4)
                for again, value2 in enumerate(values[step - step % 4 : step], start=step - step % 4 + 1):
                    line.steps(1, entropy=value2)
                    if again % 4 == 0:
                        line.checkpoint()
        return rules_and_steps(line)

    uninterrupted = run(None)
    assert uninterrupted == [("entropy_floor", 16, "halt")]
    for kill_at in (7, 13, 14, 15):
        assert run(kill_at) == uninterrupted


def test_going_past_a_halt_keeps_the_rule_quiet_until_it_clears_beyond_that_step():
    line = Line(rules(no_signal={"max_share": 0.9, "window": 2}))
    line.steps(4, tied=0.5)
    line.checkpoint()
    line.steps(2, tied=1.0)
    assert rules_and_steps(line) == [("no_signal", 6, "halt")]
    line.append(line.run.acknowledge_halt("continue", "the items are easy at first", "ckpt/4", 4, silenced=True))
    line.start(4)
    line.steps(4, tied=1.0)  # steps 5..8 replay the same signal: quiet
    assert len(line.trips) == 1 and not line.halted
    line.steps(2, tied=0.0)  # clears past step 6
    line.steps(2, tied=1.0)
    assert rules_and_steps(line)[-1] == ("no_signal", 12, "halt")


def test_a_log_from_before_monitors_is_watched_by_no_rule():
    line = Line(rules(truncation={"max_share": 0.1, "window": 1}))
    old = [msgspec.structs.replace(e, monitors=None) if isinstance(e, ev.TrainingStarted) else e for e in line.events]
    old += [
        ev.TrainStep(
            step=1,
            loss=0.1,
            kl=0.0,
            ratio=1.0,
            lr=1e-3,
            reward=0.5,
            mem_used_mb=1.0,
            sec_per_step=1.0,
            tokens=8,
            diagnostics={"clipped_ratio": 1.0},
            seq=len(old),
        )
    ]
    replayed = replay(old)
    assert due(replayed.projection.monitor, replayed.projection.watched) == []


def test_the_monitor_state_survives_a_snapshot_round_trip():
    line = Line(rules(shadow_regression={}, reward_hacking={}, budget={"line": {"judge_calls": 10_000}}))
    evaluations(line, [0.3, 0.5, 0.45], judge_calls=2)
    encoded = msgspec.json.encode(line.replayer.projection)
    decoded = msgspec.json.decode(encoded, type=type(line.replayer.projection))
    assert decoded == line.replayer.projection
    assert math.isclose(decoded.monitor.run_spend.judge_calls, 20)


def test_a_line_that_starts_over_before_its_first_checkpoint_keeps_its_step_0_evaluation():
    """The stage does not evaluate step 0 again when its evaluation is in the log, so the monitors keep it too: the
    plateau that reads step 0 trips where the uninterrupted line's does."""

    def run(killed: bool) -> list[tuple[str, int, str]]:
        line = Line(rules(plateau={"window": 1, "min_gain_pp": 100.0}))
        line.evaluate([0.0] * 60, [0] * 60)
        if killed:
            line.steps(2)
            line.start(0)  # killed before the first checkpoint: the line starts over
        line.steps(4)
        line.checkpoint()
        line.evaluate([0.0] * 60, [1] * 60)
        return rules_and_steps(line)

    assert run(killed=True) == run(killed=False) == [("plateau", 4, "stop")]
