"""Round 2's `thinking_fits` measurement: does the base model's reasoning fit `train.max_completion_tokens`, and do its
sampled groups disagree often enough for a group-relative advantage to train on?

Read off the base model's sampled shadow replies (round 2's shadow run, `shadow.samples` per item at the training
sampling), item by item:
- `cut_share`: replies that reached the limit without an end token. A thinking model's cut reply is usually still
  inside `<think>`: no visible answer, a 0, and (kept in the loss) a negative advantage whenever a group-mate answered,
  so the policy would learn to think less. Its interval is over items (the unit a shadow set samples): a t-interval of
  the per-item cut rates, or where every item has the same rate (none cut, say) the Clopper-Pearson interval of the
  replies, whose correlation within an item it then ignores.
- the token lengths of the replies that closed their thinking (ended, with thinking off): the limit a config needs;
- `no_signal_share`: items whose samples all succeed or all fail (`all_succeed_share`, `all_fail_share`). Such a
  group's rewards do not spread (GRPO's advantages are 0, the group trains nothing). With fewer samples than a
  training group (`train.num_generations`) agreement is more likely, so this reads high then.
Both by task and by difficulty too. Pure: replies in, a CheckResult out (rc1/app/shadow_run.py runs it)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import msgspec

from rc1.checks.result import CheckResult
from rc1.core.runbook import Runbook
from rc1.data.task import TaskItem
from rc1.run.monitors.stats import mean_interval
from rc1.scoring.thinking import split_reply

CONFIDENCE = 0.95


class SampledReplies(msgspec.Struct, frozen=True, kw_only=True):
    """`samples` sampled replies per item, item by item: each reply's text, token count, whether it ended before the
    limit, and its correctness (0/1)."""

    items: list[TaskItem]
    samples: int
    texts: list[str]
    tokens: list[int]
    ended: list[bool]
    correct: list[float]


class ShareInterval(msgspec.Struct, frozen=True, kw_only=True):
    share: float
    low: float
    high: float


def cut_interval(cut_per_item: Sequence[int], samples: int) -> ShareInterval:
    """The share of replies cut, with its 95 % interval over items (see the module's docstring)."""
    rates = [c / samples for c in cut_per_item]
    share = math.fsum(rates) / len(rates)
    interval = mean_interval(rates, CONFIDENCE)
    if interval is not None and interval.high > interval.low:
        return ShareInterval(share=share, low=max(0.0, interval.low), high=min(1.0, interval.high))
    from scipy.stats import binomtest

    cut, replies = sum(cut_per_item), samples * len(cut_per_item)
    exact = binomtest(cut, replies).proportion_ci(confidence_level=CONFIDENCE, method="exact")
    return ShareInterval(share=share, low=float(exact.low), high=float(exact.high))


def quantile(values: Sequence[int], q: float) -> float:
    ordered = sorted(values)
    return float(ordered[min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1)]) if ordered else math.nan


def thinking_fits(
    replies: SampledReplies, *, thinking: bool, max_tokens: int, max_cut_share: float, max_no_signal_share: float
) -> CheckResult:
    k, items = replies.samples, replies.items
    per_item = [range(i * k, (i + 1) * k) for i in range(len(items))]
    cut = [sum(not replies.ended[r] for r in rows) for rows in per_item]
    wins = [sum(round(replies.correct[r]) for r in rows) for rows in per_item]
    closed = [
        replies.tokens[r]
        for r in range(len(replies.texts))
        if (split_reply(replies.texts[r], thinking).closed if thinking else replies.ended[r])
    ]
    cuts = cut_interval(cut, k)
    flat = [w in (0, k) for w in wins]
    no_signal = sum(flat) / len(items)
    measured = {
        "items": float(len(items)),
        "samples": float(k),
        "max_completion_tokens": float(max_tokens),
        "cut_share": cuts.share,
        "cut_share_low": cuts.low,
        "cut_share_high": cuts.high,
        "closed_share": len(closed) / len(replies.texts),
        "no_signal_share": no_signal,
        "all_fail_share": sum(w == 0 for w in wins) / len(items),
        "all_succeed_share": sum(w == k for w in wins) / len(items),
    }
    if closed:
        measured.update({f"closed_tokens_p{q}": quantile(closed, q / 100) for q in (50, 90, 99)})
        measured["closed_tokens_max"] = float(max(closed))
    for kind, key in (("task", lambda item: item.task), ("difficulty", lambda item: item.difficulty)):
        for group in sorted({key(item) for item in items}):
            members = [i for i, item in enumerate(items) if key(item) == group]
            measured[f"{kind}.{group}.items"] = float(len(members))
            measured[f"{kind}.{group}.cut_share"] = sum(cut[i] for i in members) / (k * len(members))
            measured[f"{kind}.{group}.no_signal_share"] = sum(flat[i] for i in members) / len(members)
    failed = []
    if cuts.share > max_cut_share:
        failed.append(
            f"{cuts.share:.1%} of the replies were cut at {max_tokens} tokens (95 % interval "
            f"{cuts.low:.1%}–{cuts.high:.1%}), above preflight.max_cut_share {max_cut_share:.0%}: how much longer they "
            "would have run is not known from here"
        )
    if no_signal > max_no_signal_share:
        failed.append(
            f"{no_signal:.1%} of the items gave {k} replies that all succeed or all fail, above "
            f"preflight.max_no_signal_share {max_no_signal_share:.0%}"
        )
    flat_tasks = [
        f"{task} {measured[f'task.{task}.no_signal_share']:.0%}"
        for task in sorted({item.task for item in items})
        if measured[f"task.{task}.no_signal_share"] > max_no_signal_share
    ]
    lengths = ""
    if closed:
        lengths = f" (median {measured['closed_tokens_p50']:.0f}, p99 {measured['closed_tokens_p99']:.0f} tokens)"
    said = (
        f"{len(items)} items × {k} samples at {max_tokens} tokens: {cuts.share:.1%} cut ({cuts.low:.1%}–"
        f"{cuts.high:.1%}), {len(closed)} of {len(replies.texts)} closed{lengths}; {no_signal:.1%} of items without "
        f"signal ({measured['all_succeed_share']:.1%} all succeed, {measured['all_fail_share']:.1%} all fail)"
        + (f"; flat tasks: {', '.join(flat_tasks)}" if flat_tasks else "")
    )
    return CheckResult(
        name="thinking_fits",
        passed=not failed,
        measured=measured,
        thresholds={"max_cut_share": max_cut_share, "max_no_signal_share": max_no_signal_share},
        detail=said if not failed else "; ".join(failed) + f" ({said})",
    )


RUNBOOK = Runbook(
    means="the base model's sampled replies do not fit train.max_completion_tokens (cut inside their thinking: no "
    "answer, a 0, and a push towards thinking less), or too many items' replies all succeed or all fail, so their "
    "groups carry no advantage and the steps train on little",
    tries=(
        "cut replies: raise train.max_completion_tokens, with --accept-changed-inputs (both rounds run again); a cut "
        "reply's length is only known to exceed the limit, so double it and read round 2's closed lengths again "
        "(memory: the KV cache grows with it, docs/gpu.md)",
        "keep cut replies out of the loss as well: train.mask_truncated_completions: true (TRL's, DAPO's overlong "
        "filtering), and the soft overlong zone reward.overlong_cache_fraction",
        "items all succeed (too easy: GSM8K for a strong model): lower that task's data.mix share, or shift "
        "data.difficulty_target towards hard",
        "items all fail (too hard, or replies never reach an answer): read them with rc1 shadow run --tag probe and "
        "the report's replies; check the prompt template and model.thinking",
        "fewer samples than a training group agree more often: shadow.samples equal to train.num_generations "
        "measures what a step sees",
    ),
)
