"""shadow_regression: the shadow set's success significantly below the best evaluation so far, paired over items,
at `window` evaluations in a row; greedy and sampled success each count.

The best evaluation is chosen on one half of the shadow items (those at even positions) and the regression measured
on the other half: chosen and measured on the same items, a run that only stays level would look worse than its
luckiest evaluation (in a null simulation of 51 evaluations of 245 items, 93 % of such runs tripped at 95 %, window 2;
with the halves, 2 %). The window and confidence are set from that simulation (tests/e2e/test_monitor_null.py reports
the false-trip rate of the defaults)."""

from __future__ import annotations

from typing import Annotated, Literal, NamedTuple

import msgspec
from msgspec import Meta

from rc1.core.runbook import Runbook
from rc1.run.monitors.spec import Action, MonitorSpec, RuleParams, SignalPath
from rc1.run.monitors.state import MonitorState, Reading, ShadowReadout
from rc1.run.monitors.stats import Interval, paired_interval

METRICS = ("greedy", "sampled")


class ShadowRegression(RuleParams):
    """A regression on the shadow set: an evaluation's success (greedy, or sampled) below the best evaluation before
    it, the paired interval over items entirely below −min_drop_pp, at `window` evaluations in a row."""

    metrics: Annotated[
        list[Literal["greedy", "sampled"]],
        Meta(
            description="Which success counts: greedy (one reply per item), sampled (release.samples replies per "
            "item); either regressing trips the rule. A thinking model's line (training_started.thinking) reads "
            "sampled alone: its greedy replies are a view that halts nothing."
        ),
    ] = msgspec.field(default_factory=lambda: ["greedy", "sampled"])
    min_drop_pp: Annotated[
        float,
        Meta(
            ge=0.0,
            description="The drop, in percentage points, the interval must lie beyond (0: any significant drop).",
        ),
    ] = 0.0
    confidence: Annotated[float, Meta(gt=0.5, lt=1.0, description="The interval's confidence.")] = 0.99
    window: Annotated[int, Meta(ge=1, description="Evaluations in a row that must regress.")] = 2
    action: Annotated[Action, Meta(description="warn, halt or stop (end the line early as complete).")] = "halt"


def rates(point: ShadowReadout, metric: str) -> list[float]:
    return point.greedy_rates if metric == "greedy" else point.sampled_rates


class _Rated(NamedTuple):
    """Each evaluation's per-item success of one metric, the sum over its choosing half, and its step (read once per
    reading: every gap of the window compares against all the evaluations before it)."""

    items: list[list[float]]
    chosen: list[float]
    steps: list[int]

    @classmethod
    def of(cls, evals: list[ShadowReadout], metric: str) -> _Rated:
        items = [rates(e, metric) for e in evals]
        return cls(items, [sum(r[0::2]) for r in items], [e.step for e in evals])


def against_best(rated: _Rated, index: int, confidence: float) -> tuple[Interval, int] | None:
    """Evaluation `index` minus the best evaluation before it, paired over the measuring half of the items (odd
    positions), the best chosen by its mean on the choosing half (even positions); with the best's step. None for the
    first evaluation, or one whose items differ in number."""
    now = rated.items[index]
    earlier = [j for j in range(index) if len(rated.items[j]) == len(now)]
    if not earlier:
        return None
    best = max(earlier, key=rated.chosen.__getitem__)  # the earliest of equals: max keeps the first
    gap = paired_interval(now[1::2], rated.items[best][1::2], confidence)
    return (gap, rated.steps[best]) if gap is not None else None


def read(params: ShadowRegression, state: MonitorState) -> Reading | None:
    evals = state.evals
    if len(evals) < params.window + 1:
        return None
    measured: dict[str, float] = {}
    worst: tuple[float, str] | None = None
    breach = False
    # A thinking model's greedy replies are a secondary view (its cards: sampled settings only; "DO NOT use greedy
    # decoding"): they halt nothing, whatever the metrics list.
    for metric in (m for m in METRICS if m in params.metrics and not (m == "greedy" and state.thinking)):
        rated = _Rated.of(evals, metric)
        gaps = [against_best(rated, i, params.confidence) for i in range(len(evals) - params.window, len(evals))]
        if any(g is None for g in gaps) or not rates(evals[-1], metric):
            continue
        now, best_step = gaps[-1]
        measured.update(
            {
                f"{metric}_gain_pp": 100 * now.mean,
                f"{metric}_ci_low_pp": 100 * now.low,
                f"{metric}_ci_high_pp": 100 * now.high,
                f"{metric}_best_step": float(best_step),
            }
        )
        if all(g.high < -params.min_drop_pp / 100 for g, _ in gaps):
            breach = True
        if worst is None or now.mean < worst[0]:
            worst = (now.mean, metric)
    if worst is None:
        return None
    metric = worst[1]
    detail = (
        f"{metric} success {measured[f'{metric}_gain_pp']:+.1f} pp against the best so far (step "
        f"{int(measured[f'{metric}_best_step'])}), {params.confidence:.0%} interval "
        f"{measured[f'{metric}_ci_low_pp']:+.1f} to {measured[f'{metric}_ci_high_pp']:+.1f} pp over "
        f"{len(rates(evals[-1], metric)) // 2} items (the best chosen on the other half)"
    )
    measured["items"] = float(len(rates(evals[-1], metric)) // 2)
    return Reading(
        step=state.step,
        value=100 * worst[0],
        threshold=-params.min_drop_pp,
        breach=breach,
        measured=measured,
        thresholds={"min_drop_pp": params.min_drop_pp, "confidence": params.confidence},
        window=params.window,
        detail=detail + (f"; below it at {params.window} evaluation(s) in a row" if breach else ""),
    )


SPEC = MonitorSpec(
    name="shadow_regression",
    about="shadow-set success (greedy or sampled) significantly below the best evaluation so far, paired over items",
    params=ShadowRegression,
    checked=("eval",),
    read=read,
    reads=(SignalPath("eval_completed.item_greedy"), SignalPath("eval_completed.item_sampled")),
    runbook=Runbook(
        means="training is making the policy worse on held-out items: a learning rate too high for this stage, a "
        "reward that pays for something else (see reward_hacking), or forgetting",
        tries=(
            "roll back to the best checkpoint with a lower learning rate: rc1 advance --from best --set "
            "train.learning_rate=<lower> --because …",
            "stop the line and take its best checkpoint to the verdict: rc1 advance --stop --because …",
            "compare the replies: rc1 rollouts --eval STEP --worst 5",
        ),
    ),
)
