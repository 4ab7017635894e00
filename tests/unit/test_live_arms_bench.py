"""`make bench`'s live arms (rc1/bench/live_arms.py), the parts that decide: whether the live gain fell without the
pages (per gate item, the live gain minus the control's, bootstrapped) and the tool-use figures with their intervals."""

import msgspec
import pytest

from rc1.bench.live_arms import ArmResult, by_task, gain_fell, tool_use_lines, wilson
from rc1.run import events as ev
from rc1.scoring import episode_stats as es

ITEMS = [f"gate-{i:03d}" for i in range(40)]


def gate(policy: str, sampled: list[int], items=ITEMS) -> ev.GateSetEvaluated:
    return ev.GateSetEvaluated(
        policy=policy,
        step=0 if policy == "base" else 20,
        checkpoint=None,
        gate_sha256="0" * 64,
        samples=4,
        temperature=0.85,
        generation_seed=4242,
        item_ids=list(items),
        sampled=sampled,
        greedy=[0] * len(items),
        sampled_success=sum(sampled) / (4 * len(items)),
        greedy_success=0.0,
    )


def arm(name: str, base: list[int], selected: list[int], items=ITEMS) -> ArmResult:
    return ArmResult(
        name=name,
        seconds=1.0,
        release=None,
        base=gate("base", base, items),
        selected=gate("selected", selected, items),
        tool_use={},
    )


def test_a_gain_the_pages_earned_lies_above_0_and_a_gain_without_them_as_well_does_not():
    base = [0, 1] * 20
    live = arm("live", base, [2, 3] * 20)  # +2 of 4 samples on every item
    control_flat = arm("live-no-wiki", base, base)  # no gain without pages
    gain, low, high, n = gain_fell(live, control_flat)
    assert (gain, low, high, n) == (50.0, 50.0, 50.0, 40)
    control_same = arm("live-no-wiki", base, [2, 3] * 19 + [1, 4])  # as much gain without pages, item by item ±1
    gain, low, high, n = gain_fell(live, control_same)
    assert low <= 0 <= high and n == 40


def test_the_gain_by_task_reads_each_tasks_items_of_the_gate_set():
    tasks = {item: "hotpotqa" if i < 30 else "strategyqa" for i, item in enumerate(ITEMS)}
    moved = ArmResult(**{**msgspec.structs.asdict(arm("live", [0] * 40, [1] * 30 + [4] * 10)), "tasks": tasks})
    assert by_task(moved) == ["hotpotqa 0.000 -> 0.250 (n=30)", "strategyqa 0.000 -> 1.000 (n=10)"]


def test_arms_on_different_gate_items_cannot_be_paired():
    other = [f"other-{i:03d}" for i in range(40)]
    with pytest.raises(ValueError, match="different gate items"):
        gain_fell(arm("live", [0] * 40, [1] * 40), arm("live-no-wiki", [0] * 40, [1] * 40, other))


def test_tool_use_reads_each_share_with_its_count_and_derives_ask_precision():
    stats = {
        es.EPISODES: 60.0,
        es.CALLS: 148.0,
        es.CALLS_PER_EPISODE: 148 / 60,
        es.HOPS_PER_EPISODE: 0.55,
        es.FAILURE_SHARE: 0.75,
        es.NEEDED: 6.0,
        es.NOT_NEEDED: 54.0,
        es.ASKED_WHEN_NEEDED: 0.5,  # 3 of 6
        es.ASKED_NEEDLESSLY: 1 / 54,  # 1 of 54
    }
    lines = tool_use_lines(stats)
    assert lines[0] == "calls/episode 2.47, hops/episode 0.55"
    assert lines[1] == f"valid calls {wilson(0.25, 148)}" and "(n=148)" in lines[1]
    assert lines[2].startswith("ask recall 0.50 [") and lines[2].endswith("(n=6)")
    assert lines[3].startswith("ask precision 0.75 [") and lines[3].endswith("(n=4)")  # 3 of the 4 that asked
    assert lines[4].startswith("over-asking 0.02 [") and lines[4].endswith("(n=54)")


def test_a_wilson_interval_holds_its_share():
    assert wilson(0.0, 15) == "0.00 [0.00, 0.20] (n=15)"
    assert wilson(0.0, 0) == "not measured (n=0)"
    low, high = (float(x) for x in wilson(0.26, 148).split("[")[1].split("]")[0].split(", "))
    assert low < 0.26 < high
