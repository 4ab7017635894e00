"""The four rules on a live line's tool use (issue 43): tool_failures, tool_hops_drift, over_asking, never_asking. Each
reads train_step.episodes (rc1/scoring/episode_stats.py) over a window of steps, weighs a share by the count it is a
share of, reads nothing on a recorded line, and warns by default; logged sequences folded by the real replay (pure:
seconds). How often they trip on healthy lines is tests/e2e/test_monitor_tool_use_null.py."""

from __future__ import annotations

import pytest
from monitor_logs import Line, rules

from rc1.run.monitors.plan import reader
from rc1.run.monitors.rules import CONFIGURABLE
from rc1.scoring import episode_stats as stats

TOOL_RULES = ("tool_failures", "tool_hops_drift", "over_asking", "never_asking")


def tools(
    *,
    episodes: int = 16,
    calls: int = 40,
    failed: float = 0.2,
    hops: float = 2.0,
    needed: int = 4,
    asked_needed: float = 0.75,
    asked_not_needed: float = 0.0,
) -> dict[str, float]:
    """A live step's train_step.episodes, its shares left out where their count is 0 (as episode_stats does)."""
    figures = {
        stats.EPISODES: float(episodes),
        stats.CALLS: float(calls),
        stats.CALLS_PER_EPISODE: calls / episodes,
        stats.HOPS_PER_EPISODE: hops,
        stats.UNFINISHED: 0.0,
        stats.NEEDED: float(needed),
        stats.NOT_NEEDED: float(episodes - needed),
    }
    if calls:
        figures[stats.FAILURE_SHARE] = failed
    if needed:
        figures[stats.ASKED_WHEN_NEEDED] = asked_needed
    if episodes - needed:
        figures[stats.ASKED_NEEDLESSLY] = asked_not_needed
    return figures


def trips(line: Line) -> list[tuple[str, int, str]]:
    return [(t.rule, t.step, t.action) for t in line.trips]


def test_the_rules_read_the_keys_episode_stats_writes_and_warn_by_default():
    """rc1/run sits below rc1/scoring, so the rules name the keys as text: held equal to episode_stats's here."""
    written = {
        stats.EPISODES,
        stats.CALLS,
        stats.FAILURE_SHARE,
        stats.HOPS_PER_EPISODE,
        stats.NEEDED,
        stats.ASKED_WHEN_NEEDED,
        stats.NOT_NEEDED,
        stats.ASKED_NEEDLESSLY,
    }
    for rule in TOOL_RULES:
        spec = CONFIGURABLE[rule]
        assert spec.params().action == "warn" and spec.checked == ("step",) and spec.sampled_only
        for signal in spec.reads:
            event, field, key = signal.path.split(".")
            assert (event, field) == ("train_step", "episodes") and key in written and signal.each_step
            reader(signal.path)  # a number of a train_step the fold can keep


def test_a_recorded_line_records_no_tool_use_and_the_rules_read_nothing():
    line = Line(rules(**{rule: {"window": 2} for rule in TOOL_RULES}))
    line.steps(30)
    assert line.trips == [] and not set(TOOL_RULES) & set(line.state.watch.readings)


def test_tool_failures_weighs_each_step_by_its_calls_and_warns_above_the_ceiling():
    line = Line(rules(tool_failures={"max_share": 0.3, "window": 2, "min_calls": 20}))
    line.steps(2, episodes=[tools(calls=90, failed=0.0), tools(calls=10, failed=1.0)])  # 10 of 100: not 50 %
    reading = line.state.watch.readings["tool_failures"]
    assert reading.value == pytest.approx(0.1) and reading.measured["calls"] == 100 and line.trips == []
    line.steps(1, episodes=tools(calls=30, failed=0.6))  # 28 of 40
    assert trips(line) == [("tool_failures", 3, "warn")] and not line.halted
    trip = line.trips[0]
    assert trip.measured == {"failed_share": pytest.approx(0.7), "calls": 40.0}
    assert trip.threshold == {"max_share": 0.3, "min_calls": 20.0}
    assert "70% of the 40 tool calls failed, over the last 2 steps (more than 30%)" in trip.detail


def test_tool_failures_reads_nothing_below_its_fewest_calls_and_a_step_of_no_calls_adds_nothing():
    line = Line(rules(tool_failures={"window": 2, "min_calls": 20}))
    line.steps(2, episodes=[tools(calls=0), tools(calls=10, failed=1.0)])  # 10 calls in the window: too few
    assert "tool_failures" not in line.state.watch.readings
    line.steps(1, episodes=tools(calls=20, failed=0.9))  # 28 of 30
    assert trips(line) == [("tool_failures", 3, "warn")]
    assert line.trips[0].measured["failed_share"] == pytest.approx(28 / 30)


def test_over_asking_warns_when_items_needing_no_ask_are_asked_anyway():
    line = Line(rules(over_asking={"max_share": 0.3, "window": 3, "min_episodes": 20}))
    line.steps(3, episodes=tools(needed=2, asked_not_needed=1 / 14))
    assert line.state.watch.readings["over_asking"].value == pytest.approx(1 / 14) and line.trips == []
    line.steps(3, episodes=tools(needed=2, asked_not_needed=0.5))
    assert trips(line) == [("over_asking", 5, "warn")]  # (1 + 7 + 7) of 42 at step 5
    assert line.trips[0].measured == {"asked_share": pytest.approx(15 / 42), "episodes": 42.0}


def test_never_asking_warns_when_items_needing_an_ask_go_unasked_and_weighs_by_them():
    line = Line(rules(never_asking={"min_share": 0.3, "window": 2, "min_episodes": 10}))
    line.steps(2, episodes=[tools(needed=2, asked_needed=0.0), tools(needed=8, asked_needed=0.5)])  # 4 of 10
    assert line.state.watch.readings["never_asking"].value == pytest.approx(0.4) and line.trips == []
    line.steps(1, episodes=tools(needed=0))  # no such item: the step adds nothing, the window is too small
    assert line.state.watch.readings["never_asking"].step == 2
    line.steps(1, episodes=tools(needed=12, asked_needed=0.25))  # 3 of 12
    assert trips(line) == [("never_asking", 4, "warn")]
    assert "less than 30%" in line.trips[0].detail


def test_tool_hops_drift_compares_with_the_lines_first_window_either_way():
    line = Line(rules(tool_hops_drift={"max_change": 0.4, "window": 3}))
    line.steps(3, episodes=tools(hops=2.0))  # steps 1-3: the first window, its level 2.0
    first = line.state.watch.readings["tool_hops_drift"]
    assert first.measured["baseline_hops"] == 2.0 and first.measured["baseline_step"] == 3 and first.value == 0.0
    line.steps(20, episodes=tools(hops=1.5))  # −25 %: within the bound, however long
    assert line.trips == [] and line.state.watch.readings["tool_hops_drift"].measured["baseline_step"] == 3
    line.steps(3, episodes=tools(hops=1.0))  # halved
    assert trips(line) == [("tool_hops_drift", 25, "warn")]  # (1.5 + 1 + 1) / 3 at step 25: −42 %
    trip = line.trips[0]
    assert trip.measured["change"] == pytest.approx(3.5 / 6 - 1) and trip.threshold == {"max_change": 0.4}
    assert "from the 2.00 of the window ending at step 3" in trip.detail
    line.steps(3, episodes=tools(hops=2.0))  # cleared
    line.steps(3, episodes=tools(hops=3.0))  # +50 %
    assert trips(line)[-1] == ("tool_hops_drift", 32, "warn")


def test_tool_hops_drift_takes_no_level_from_a_window_that_read_nothing():
    line = Line(rules(tool_hops_drift={"max_change": 0.4, "window": 2}))
    line.steps(3, episodes=tools(hops=0.0))
    assert "tool_hops_drift" not in line.state.watch.readings
    line.steps(1, episodes=tools(hops=2.0))  # steps 3-4: 1.0 an episode, the first level
    assert line.state.watch.readings["tool_hops_drift"].measured["baseline_hops"] == 1.0


def test_a_resumed_line_keeps_its_first_level_and_trips_where_the_uninterrupted_one_did():
    """The level is carried in the rule's own reading, which the checkpoint's watch holds: a line killed after its
    first window and resumed from a checkpoint compares with the same level (a line begun again takes its own)."""

    def run(kill_at: int | None) -> list[tuple[str, int, str]]:
        line = Line(rules(tool_hops_drift={"max_change": 0.4, "window": 4}))
        hops = [2.0] * 8 + [1.7] * 4 + [1.0] * 8
        for step, value in enumerate(hops, start=1):
            line.steps(1, episodes=tools(hops=value))
            if step % 4 == 0:
                line.checkpoint()
            if step == kill_at:
                line.start(step - step % 4)
                for again in range(step - step % 4 + 1, step + 1):
                    line.steps(1, episodes=tools(hops=hops[again - 1]))
                    if again % 4 == 0:
                        line.checkpoint()
        return trips(line)

    uninterrupted = run(None)
    assert uninterrupted == [("tool_hops_drift", 15, "warn")]
    for kill_at in (6, 10, 14):
        assert run(kill_at) == uninterrupted

    again = Line(rules(tool_hops_drift={"max_change": 0.4, "window": 2}))
    again.steps(4, episodes=tools(hops=2.0))
    again.start(0)  # begun again from the base: the watch at step 0 has no level
    again.steps(2, episodes=tools(hops=1.0))
    assert again.trips == [] and again.state.watch.readings["tool_hops_drift"].measured["baseline_hops"] == 1.0
