"""What a monitor rule's spec declares is what the fold keeps for it (the numbers of each step it reads, as many recent
steps as it needs, the steps between evaluations), what status says it reads, and which rules a strategy that samples
no replies leaves unread; the fold names no rule."""

from __future__ import annotations

import pytest
from monitor_logs import Line, rules

from rc1.run.monitors.plan import reader
from rc1.run.monitors.rules import MONITORS
from rc1.run.monitors.sections import MonitorsConfig, reading_sampled_replies, watched
from rc1.run.monitors.state import StepsBetween


def test_the_fold_keeps_only_the_numbers_the_watched_rules_declare_for_as_many_steps_as_they_need():
    line = Line(rules(truncation={"window": 3}))
    line.steps(5, clipped=0.25)
    steps = line.state.watch.steps
    assert [p.step for p in steps] == [3, 4, 5]
    assert all(p.values == {"train_step.diagnostics.clipped_ratio": 0.25} for p in steps)


def test_the_steps_kept_are_the_longest_need_of_a_watched_rule_and_an_unrecorded_number_is_absent():
    line = Line(rules(entropy_floor={"window": 4, "max_rise": 2.0}, budget={"window": 5}))
    line.steps(12, entropy=None)
    steps = line.state.watch.steps
    assert len(steps) == 8  # the entropy rule's rise compares two windows of 4
    assert all(p.values == {} for p in steps)


def test_the_steps_between_evaluations_are_accumulated_only_while_a_watched_rule_reads_them():
    unread = Line(rules(truncation={}))
    unread.steps(3)
    assert unread.state.watch.since_eval == StepsBetween()
    read = Line(rules(reward_hacking={}))
    read.steps(3, reward=[0.1, 0.2, 0.3])
    between = read.state.watch.since_eval
    assert between.reward.n == 3 and between.correctness.n == 3
    assert set(between.shares) == {"correctness", "format", "length"}


@pytest.mark.parametrize(
    "path", ["train_step.diagnostics", "train_step.grad_norms", "train_step.scoring", "eval_completed.drift"]
)
def test_a_number_read_at_each_step_must_name_one_of_a_train_step(path):
    with pytest.raises(ValueError, match=r"train_step.<field> \(a number\) or train_step.<field>.<key>"):
        reader(path)


def test_a_number_of_a_train_step_is_read_off_it_or_none_where_it_is_not_recorded():
    line = Line(rules())
    line.steps(1, entropy=None, clipped=0.5)
    step = line.events[-1]
    assert reader("train_step.diagnostics.clipped_ratio")(step) == 0.5
    assert reader("train_step.diagnostics.entropy")(step) is None
    assert reader("train_step.grad_norm")(step) is None and reader("train_step.sec_per_step")(step) == 1.0


def test_what_status_says_a_rule_reads_is_its_declared_signals_grouped_by_event():
    assert MONITORS["entropy_floor"].signal == "train_step.diagnostics.entropy"
    assert MONITORS["shadow_regression"].signal == "eval_completed.item_greedy and item_sampled"
    assert MONITORS["reward_hacking"].signal == "train_step.reward and components; eval_completed.item_sampled"
    assert MONITORS["budget"].signal == (
        "train_step.scoring and sec_per_step; eval_completed.scoring and seconds; every event's ts"
    )


def test_the_rules_that_read_only_sampled_replies_are_the_watched_ones_in_the_tables_order():
    assert reading_sampled_replies(MonitorsConfig()) == [
        "entropy_floor",
        "truncation",
        "no_signal",
        *("tool_failures", "tool_hops_drift", "over_asking", "never_asking"),  # a live line's rollouts' tool use
        "sampler_mismatch",  # vLLM's rollouts against the trainer
    ]
    assert reading_sampled_replies(rules(no_signal={}, truncation={}, reward_hacking={})) == ["truncation", "no_signal"]
    assert reading_sampled_replies(watched(rules(drift={}, budget={}))) == []


class _Asked(dict):
    """A step's values that remember every signal a rule asked for."""

    asked: set[str] = set()

    def get(self, key, default=None):
        _Asked.asked.add(key)
        return super().get(key, default)


def test_a_step_rule_reads_only_the_numbers_its_spec_declares_each_step():
    """A rule reading a number it did not declare would find it absent at every step and never trip, silently."""
    import msgspec

    from rc1.run.monitors.rules import CONFIGURABLE
    from rc1.run.monitors.state import MonitorState, StepPoint, Watch

    for name, spec in CONFIGURABLE.items():
        if "step" not in spec.checked:
            continue
        declared = {s.path for s in spec.reads if s.each_step}
        _Asked.asked = set()
        points = tuple(
            StepPoint(step=i, values=_Asked(), judge_calls=0, judge_tokens=0, judge_cost_usd=0.0, wall_seconds=1.0)
            for i in range(1, 65)
        )
        state = MonitorState(step=64, max_steps=1000, watch=msgspec.structs.replace(Watch(), steps=points))
        spec.read(spec.params(), state)
        assert _Asked.asked <= declared, f"{name} reads {_Asked.asked - declared} without declaring them each_step"
