"""Live episodes' tool use on the record (issue 43): each training step's rollouts and each evaluation's greedy
replies give their calls, failures, hops and asks (rc1/scoring/episode_stats.py) to train_step.episodes and
eval_completed.episodes, counted from the same reading the reward used; a recorded line records none. The rollouts are
gold trajectories played as TRL plays them against real environments, scored by the real reward function and
recorded by the real `RolloutRecorder` (tests/unit/test_live_archive.py)."""

import msgspec
import pytest
from test_live_archive import TOKENS, gold, items, loaded, weights  # noqa: F401  (fixtures)

from rc1.app.rollouts import RolloutRecorder
from rc1.run import events as ev
from rc1.run.monitors.plan import reader
from rc1.scoring import episode_stats as stats
from rc1.scoring.episode_outcome import outcome
from rc1.scoring.pipeline import ScoringPipeline, make_reward_fn, rule_scorer

# A step of a recorded line: no `episodes` figures.
RECORDED_STEP = ev.TrainStep(
    step=1, loss=0.0, kl=0.0, ratio=1.0, lr=0.0, reward=0.0, mem_used_mb=0.0, sec_per_step=1.0, tokens=1
)


def step_figures(loaded, rollouts) -> dict[str, float]:  # noqa: F811
    recorder = RolloutRecorder(loaded.config, weights(loaded))
    reward_fn = make_reward_fn(
        loaded.config.reward, weights(loaded), ScoringPipeline(rule_scorer(loaded, thinking=False)), recorder.record
    )
    reward_fn(
        [r.environment.item for r in rollouts],
        [r.messages for r in rollouts],
        [TOKENS] * len(rollouts),
        environments=[r.environment for r in rollouts],
    )
    return recorder.close_step(1).episodes


def test_a_step_of_gold_episodes_calls_asks_where_needed_and_fails_nothing(loaded, items):  # noqa: F811
    hotpot, gsm8k = items["hotpot"], items["gsm8k"]
    figures = step_figures(loaded, [gold(hotpot), gold(gsm8k)])
    calls = len(gold(hotpot).environment.transcript) + len(gold(gsm8k).environment.transcript)
    assert figures[stats.EPISODES] == 2 and figures[stats.CALLS] == calls
    assert figures[stats.FAILURE_SHARE] == 0.0
    assert figures[stats.NEEDED] == 1 and figures[stats.ASKED_WHEN_NEEDED] == 1.0  # the gsm8k item asked
    assert figures[stats.NOT_NEEDED] == 1 and figures[stats.ASKED_NEEDLESSLY] == 0.0
    assert figures[stats.UNFINISHED] == 0.0 and figures[stats.HOPS_PER_EPISODE] > 0


def test_a_wiki_miss_a_needless_ask_and_a_skipped_ask_are_counted(loaded, items):  # noqa: F811
    hotpot, gsm8k = items["hotpot"], items["gsm8k"]
    missed = gold(hotpot, then=[("wiki", {"title": "No Such Page"}), ("ask", {"question": "Which one?"})])
    skipped = _without_ask(gsm8k)
    figures = step_figures(loaded, [missed, skipped])
    assert figures[stats.FAILURE_SHARE] == pytest.approx(1 / figures[stats.CALLS])  # the one miss
    assert figures[stats.ASKED_NEEDLESSLY] == 1.0  # the hotpot item needed no ask and asked
    assert figures[stats.ASKED_WHEN_NEEDED] == 0.0  # the gsm8k item needed one and did not ask


def test_a_share_of_nothing_is_not_measured():
    assert stats.episode_stats([], []) == {}
    with pytest.raises(ValueError, match="2 live episodes counted with 1"):
        stats.episode_stats([True], [None, None])


def test_the_figures_are_on_the_step_event_and_a_monitor_reads_them_where_recorded():
    read = reader("train_step.episodes.tool_failure_share")
    recorded = RECORDED_STEP
    live = msgspec.structs.replace(recorded, episodes={stats.FAILURE_SHARE: 0.25})
    assert read(recorded) is None and read(live) == 0.25
    assert b"episodes" not in msgspec.json.encode(recorded)  # a recorded line's step reads as before
    assert msgspec.json.decode(msgspec.json.encode(live), type=ev.TrainStep).episodes == {stats.FAILURE_SHARE: 0.25}


def _without_ask(item):
    """The item's gold episode with its ask left out (calls after it still run: the material stays withheld)."""
    from test_episode_outcome import Rollout

    from rc1.data.gold_trajectory import gold_calls

    rollout = Rollout(item)
    for call in gold_calls(item):
        if call.tool != "ask":
            rollout.said(calls=[(call.tool, call.arguments)])
    rollout.said(f"Answer: {item.answer}")
    assert outcome(item, rollout.messages, rollout.environment.transcript).answered_without_asking
    return rollout


def test_a_field_a_line_does_not_record_is_not_in_its_text_log():
    from rc1.views.mirrors import log_line

    recorded = RECORDED_STEP
    assert "episodes" not in log_line(recorded) and "UNSET" not in log_line(recorded)
    live = msgspec.structs.replace(recorded, episodes={stats.CALLS: 3.0})
    assert "episodes='{\"tool_calls\":3.0}'" in log_line(live)
