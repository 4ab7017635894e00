"""How often the rules on a live line's tool use (tool_failures, tool_hops_drift, over_asking, never_asking) trip on
healthy lines, and how soon on faulty ones: simulations through the real fold and the rules' own code (seconds).

No healthy live line's whole log exists yet, so the healthy level is assumed, not measured: each step's episodes are
drawn one by one, a tenth of their items needing a clarification (data.clarify_rate 0.10), each episode making
Poisson(2.5) wiki/calc calls of which a fifth fail (the rest are its hops: 2 per episode), asking on 80 % of the items
that need it and 10 % of the others (an ask is a call too, and never fails). A step's figures are what
rc1/scoring/episode_stats.py makes of those episodes (the first test holds the two equal). The sizes: the embedded
default's step (configs/local.yaml: 8 prompts × 8 replies = 64 episodes) over its 120 steps; a quarter of it (16),
noisier; and the production profile's step on one process (8 × 4 = 32) over the first 1,000 of its 50,000 steps.
The false-trip rate of a line is the share of simulated lines on which the rule breached at any step, with its 95 %
Clopper-Pearson interval (docs/monitors-and-runbook.md has the figures)."""

from __future__ import annotations

import msgspec
import numpy as np
import pytest
from scipy.stats import binomtest

from rc1.run import events as ev
from rc1.run.monitors.fold import observe
from rc1.run.monitors.sections import MonitorsConfig, watched
from rc1.run.monitors.state import MonitorState
from rc1.scoring import episode_stats as stats
from rc1.scoring.episode_outcome import EpisodeOutcome

RULES = ("tool_failures", "tool_hops_drift", "over_asking", "never_asking")
# The rules at their defaults, every other rule off.
WATCHED = watched(
    msgspec.convert(
        {**{name: None for name in msgspec.structs.asdict(MonitorsConfig())}, **{rule: {} for rule in RULES}},
        MonitorsConfig,
    )
)
HEALTHY = {"failure": 0.2, "calls": 2.5, "ask_needed": 0.8, "ask_not_needed": 0.1, "clarify": 0.10}
# (episodes a step, steps of a line, lines simulated)
LOCAL, QUARTER, PRODUCTION = (64, 120, 1000), (16, 120, 2000), (32, 1000, 200)
ONSET = 30  # a fault's first step: after the first window (steps 1-10) set tool_hops_drift's level
FAULTS = {  # what each rule is for, from ONSET on
    "tool_failures": {"failure": 0.8},
    "over_asking": {"ask_not_needed": 0.6},
    "never_asking": {"ask_needed": 0.1},
    "tool_hops_drift": {"calls": 1.25},  # hops per episode halve: 2 -> 1
}


def episodes(rng: np.random.Generator, shape: tuple[int, int], level: dict[str, float]) -> dict[str, np.ndarray]:
    """Episodes drawn at `level`, `shape` = (steps, episodes a step): each one's flag, wiki/calc calls, failed calls
    and whether it asked."""
    needed = rng.random(shape) < level["clarify"]
    calls = rng.poisson(level["calls"], shape)
    failed = rng.binomial(calls, level["failure"])
    asked = rng.random(shape) < np.where(needed, level["ask_needed"], level["ask_not_needed"])
    return {"needed": needed, "calls": calls, "failed": failed, "asked": asked}


def figures(drawn: dict[str, np.ndarray]) -> list[dict[str, float]]:
    """Each step's train_step.episodes, as episode_stats makes them of its episodes (one row of `drawn` a step)."""
    needed, calls, failed, asked = drawn["needed"], drawn["calls"], drawn["failed"], drawn["asked"]
    n = needed.shape[1]
    wanted = needed.sum(axis=1)
    total = calls.sum(axis=1) + asked.sum(axis=1)
    hops = (calls - failed).sum(axis=1)
    failures = failed.sum(axis=1)
    asked_wanted, asked_unwanted = (asked & needed).sum(axis=1), (asked & ~needed).sum(axis=1)
    steps = []
    for i in range(len(needed)):
        w, t = int(wanted[i]), int(total[i])
        step = {
            stats.EPISODES: float(n),
            stats.CALLS: float(t),
            stats.CALLS_PER_EPISODE: t / n,
            stats.HOPS_PER_EPISODE: float(hops[i]) / n,
            stats.UNFINISHED: 0.0,
            stats.NEEDED: float(w),
            stats.NOT_NEEDED: float(n - w),
            stats.WIKI_CALLS: 0.0,  # the simulated calls name no tool, so none is a wiki or a calc call
            stats.CALC_CALLS: 0.0,
        }
        if t:
            step[stats.FAILURE_SHARE] = float(failures[i]) / t
        if w:
            step[stats.ASKED_WHEN_NEEDED] = float(asked_wanted[i]) / w
        if n - w:
            step[stats.ASKED_NEEDLESSLY] = float(asked_unwanted[i]) / (n - w)
        steps.append(step)
    return steps


def line(rng, size: int, steps: int, fault: dict[str, float] | None = None) -> dict[str, int]:
    """One simulated line folded step by step (a fault from step ONSET on): the first step at which each rule
    breached (absent: never)."""
    healthy = min(steps, ONSET - 1) if fault else steps
    drawn = figures(episodes(rng, (healthy, size), HEALTHY))
    if fault:
        drawn += figures(episodes(rng, (steps - healthy, size), {**HEALTHY, **fault}))
    state, first = MonitorState(), {}
    for k, tools in enumerate(drawn, start=1):
        step = ev.TrainStep(
            step=k,
            loss=0.0,
            kl=0.0,
            ratio=1.0,
            lr=0.0,
            reward=0.0,
            mem_used_mb=0.0,
            sec_per_step=1.0,
            tokens=1,
            episodes=tools,
        )
        observe(state, WATCHED, step)
        for rule in state.checked:
            if rule not in first and state.watch.readings[rule].breach:
                first[rule] = k
    return first


def false_trips(size: int, steps: int, runs: int, seed: int = 0) -> dict[str, tuple[int, float, float]]:
    """Per rule, and for any of them: (lines tripped, the 95 % Clopper-Pearson interval's low and high) of `runs`."""
    rng = np.random.default_rng(seed)
    lines = [line(rng, size, steps) for _ in range(runs)]
    counted = {rule: sum(rule in first for first in lines) for rule in RULES}
    counted["any"] = sum(bool(first) for first in lines)
    return {
        rule: (k, *binomtest(k, runs).proportion_ci(confidence_level=0.95, method="exact"))
        for rule, k in counted.items()
    }


def test_the_simulated_figures_are_what_episode_stats_makes_of_the_same_episodes():
    drawn = episodes(np.random.default_rng(7), (1, 64), HEALTHY)
    outcomes = [
        EpisodeOutcome(
            final_text="Answer: x",
            unfinished=False,
            asks=int(asked),
            asked_needlessly=int(asked and not needed),
            answered_without_asking=bool(needed and not asked),
            tool_calls=int(calls + asked),
            failed_calls=int(failed),
            tool_hops=int(calls - failed),
            turns=1,
            rolled_back=0,
        )
        for needed, calls, failed, asked in zip(*(row[0] for row in drawn.values()), strict=True)
    ]
    expected = stats.episode_stats(drawn["needed"][0].tolist(), outcomes)
    (step,) = figures(drawn)
    assert step == pytest.approx(expected) and step.keys() == expected.keys()


@pytest.mark.parametrize(
    "profile, bound",
    [
        # Measured (seed 0): no rule tripped on any of the 1,000 lines (each 0 %, interval 0 to 0.37 %).
        (LOCAL, 0.01),
        # Measured (seed 0): never_asking 9 of 2,000 lines (0.45 %, 0.21 to 0.85 %: a window holds about 16 episodes
        # that need an ask, near its min_episodes of 10), tool_hops_drift 1 (0.05 %, 0.001 to 0.28 %), the others none
        # (0 to 0.18 %); any of the four 10 (0.5 %, 0.24 to 0.92 %).
        (QUARTER, 0.02),
        # Measured (seed 0): no rule tripped on any of the 200 lines of 1,000 steps (each 0 %, interval 0 to 1.83 %).
        (PRODUCTION, 0.02),
    ],
    ids=["local-64x120", "quarter-16x120", "production-32x1000"],
)
def test_the_tool_use_rules_rarely_trip_on_a_healthy_live_line(profile, bound):
    """The bound holds the interval's upper end, per rule and for any of the four, not only the measured rate."""
    found = false_trips(*profile)
    print(profile, {rule: f"{k}/{profile[2]} ({low:.2%} to {high:.2%})" for rule, (k, low, high) in found.items()})
    assert all(high <= bound for _, _, high in found.values()), found


@pytest.mark.parametrize("size, by_window, by_two", [(64, 1.0, 1.0), (16, 0.9, 0.99)], ids=["local-64", "quarter-16"])
@pytest.mark.parametrize("rule", RULES)
def test_each_rule_trips_on_its_fault_soon_after_it_begins(rule, size, by_window, by_two):
    """Failures at 0.8, asks on 60 % of the items needing none or on 10 % of those needing one, or hops halving, from
    step 30 on, in 200 lines of 50 steps: the rule trips on none before step 30; by step 39 (its window of 10 first
    wholly after the onset) on at least `by_window` of them, by step 49 on `by_two`. Measured (seed 3): every rule on
    all 200 by step 39 at 64 episodes a step; at 16, tool_failures and over_asking all 200 by step 39,
    tool_hops_drift 194 (199 by 49: a halving is −50 % against the bound's 40 %, and the first window's level is
    itself a draw) and never_asking 189 (200 by 49: a window holds about 16 episodes that need an ask)."""
    rng = np.random.default_rng(3)
    first = np.array([line(rng, size, ONSET + 20, FAULTS[rule]).get(rule, 10**9) for _ in range(200)])
    assert (first >= ONSET).all(), "tripped on the healthy steps before the fault"
    assert (first < ONSET + 10).mean() >= by_window and (first < ONSET + 20).mean() >= by_two, sorted(first)[-10:]
