"""Round 2's thinking_fits (rc1/checks/thinking_fits.py): the share of the base model's sampled replies cut at the
limit, with its interval over items, the lengths of the replies that closed their thinking, and the share of items
whose samples all succeed or all fail, by task and difficulty; the gate fails on either share."""

from __future__ import annotations

import pytest

from rc1.checks.thinking_fits import SampledReplies, cut_interval, thinking_fits
from rc1.data.task import TaskItem

CLOSED = "Let me count: 2 + 2.\n</think>\n\nAnswer: 4"
OPEN = "Let me count very carefully, one apple at a time, and then again"


def item(n: int, task: str = "gsm8k", difficulty: str = "easy") -> TaskItem:
    return TaskItem(id=f"{task}-{n}", task=task, question="q", answer="4", difficulty=difficulty, prompt="p")


def replies(items: list[TaskItem], rows: list[tuple[str, int, bool, float]], k: int) -> SampledReplies:
    """`rows`: (text, tokens, ended, correct) per reply, item by item."""
    return SampledReplies(
        items=items,
        samples=k,
        texts=[r[0] for r in rows],
        tokens=[r[1] for r in rows],
        ended=[r[2] for r in rows],
        correct=[r[3] for r in rows],
    )


def judged(sample: SampledReplies, **limits):
    return thinking_fits(
        sample,
        thinking=True,
        max_tokens=64,
        max_cut_share=limits.get("max_cut_share", 0.10),
        max_no_signal_share=limits.get("max_no_signal_share", 0.85),
    )


def test_replies_that_fit_and_disagree_pass_with_their_lengths_and_interval():
    items = [item(i, "gsm8k" if i < 2 else "hotpotqa", ("easy", "hard")[i % 2]) for i in range(4)]
    rows = [(CLOSED, 10 + i, True, float(i % 2)) for i in range(16)]  # every item: 2 of 4 right
    result = judged(replies(items, rows, 4))
    assert result.passed and result.name == "thinking_fits"
    m = result.measured
    assert (m["cut_share"], m["cut_share_low"]) == (0.0, 0.0) and 0 < m["cut_share_high"] < 0.25  # exact, 16 replies
    assert (m["no_signal_share"], m["closed_share"]) == (0.0, 1.0)
    assert (m["closed_tokens_p50"], m["closed_tokens_max"]) == (17.0, 25.0)
    assert m["task.gsm8k.items"] == 2 and m["difficulty.hard.no_signal_share"] == 0.0


def test_thinking_cut_at_the_limit_fails_the_gate_and_says_how_much():
    items = [item(i) for i in range(10)]
    rows = [(OPEN, 64, False, 0.0) if r % 4 < 2 else (CLOSED, 30, True, float(r % 2)) for r in range(40)]
    result = judged(replies(items, rows, 4))
    assert not result.passed
    assert result.measured["cut_share"] == 0.5 and result.measured["closed_tokens_p99"] == 30.0
    assert "50.0% of the replies were cut at 64 tokens" in result.detail
    assert "above preflight.max_cut_share 10%" in result.detail


def test_items_whose_samples_all_agree_fail_the_gate_past_the_threshold_and_are_named_by_task():
    items = [item(i, "gsm8k") for i in range(6)] + [item(i, "strategyqa") for i in range(6, 10)]
    rows = [(CLOSED, 10, True, 1.0) for _ in range(6 * 4)] + [(CLOSED, 10, True, float(r % 2)) for r in range(16)]
    result = judged(replies(items, rows, 4), max_no_signal_share=0.5)
    assert not result.passed
    m = result.measured
    assert (m["no_signal_share"], m["all_succeed_share"], m["all_fail_share"]) == (0.6, 0.6, 0.0)
    assert m["task.gsm8k.no_signal_share"] == 1.0 and m["task.strategyqa.no_signal_share"] == 0.0
    assert "flat tasks: gsm8k 100%" in result.detail
    assert judged(replies(items, rows, 4), max_no_signal_share=0.6).passed


def test_without_thinking_a_reply_closes_by_ending():
    items = [item(0), item(1)]
    rows = [
        ("Answer: 4", 3, True, 1.0),
        ("Answer: 5", 4, True, 0.0),
        ("Answer: 4 and", 64, False, 0.0),
        ("4", 1, True, 1.0),
    ]
    result = thinking_fits(
        replies(items, rows, 2), thinking=False, max_tokens=64, max_cut_share=0.5, max_no_signal_share=1.0
    )
    assert result.passed and result.measured["closed_share"] == 0.75 and result.measured["cut_share"] == 0.25


def test_the_cut_shares_interval_is_over_items_and_exact_where_every_item_is_alike():
    varied = cut_interval([0, 4, 0, 4], 4)  # half the items cut entirely: a t-interval over the 4 items
    assert varied.share == 0.5 and varied.low == 0.0 and varied.high == 1.0  # clipped to [0, 1]
    none = cut_interval([0] * 60, 4)  # 240 replies, none cut: Clopper-Pearson's upper bound, 3.69/240
    assert none.low == 0.0 and none.high == pytest.approx(0.01527, abs=1e-4)
