"""plateau: no significant gain on the shadow set over the last `window` evaluations: the sampled success of the
latest evaluation minus that of the evaluation `window` before it, paired over items, has an interval whose lower
bound does not clear `min_gain_pp`. Its default action is `stop`: the line ends early as complete, and its release
verdict runs on the checkpoint the shadow set chose, as at max_steps. Two fixed evaluations are compared, never the
best of several, so nothing is selected on the items it is measured on. The evaluation at max_steps is left alone:
the line ends there anyway."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta

from rc1.core.runbook import Runbook
from rc1.run.monitors.spec import Action, MonitorSpec, RuleParams, SignalPath
from rc1.run.monitors.state import MonitorState, Reading
from rc1.run.monitors.stats import paired_interval


class Plateau(RuleParams):
    """A plateau: the shadow set's sampled success at the latest evaluation against the one `window` evaluations
    before, paired over items, not significantly above min_gain_pp."""

    window: Annotated[int, Meta(ge=1, description="Evaluations back to compare with.")] = 4
    min_gain_pp: Annotated[
        float,
        Meta(
            description="The gain, in percentage points, the interval's lower bound must clear for the line to go on."
        ),
    ] = 0.0
    confidence: Annotated[
        float,
        Meta(
            gt=0.5,
            lt=1.0,
            description="The interval's confidence (90 %: a stop ends a "
            "line, so a gain that is likely is enough to go on).",
        ),
    ] = 0.9
    action: Annotated[Action, Meta(description="warn, halt or stop (end the line early as complete).")] = "stop"


def read(params: Plateau, state: MonitorState) -> Reading | None:
    evals = state.evals
    if len(evals) < params.window + 1 or (state.max_steps and state.step >= state.max_steps):
        return None
    now, then = evals[-1], evals[-params.window - 1]
    if not now.samples or len(now.sampled) != len(then.sampled):
        return None
    gain = paired_interval(now.sampled_rates, then.sampled_rates, params.confidence)
    if gain is None:
        return None
    breach = 100 * gain.low <= params.min_gain_pp
    detail = (
        f"sampled success {100 * gain.mean:+.1f} pp since step {then.step} ({params.confidence:.0%} interval "
        f"{100 * gain.low:+.1f} to {100 * gain.high:+.1f} pp over {gain.n} items)"
    )
    return Reading(
        step=state.step,
        value=100 * gain.mean,
        threshold=params.min_gain_pp,
        breach=breach,
        measured={
            "gain_pp": 100 * gain.mean,
            "ci_low_pp": 100 * gain.low,
            "ci_high_pp": 100 * gain.high,
            "from_step": float(then.step),
            "items": float(gain.n),
        },
        thresholds={"min_gain_pp": params.min_gain_pp, "confidence": params.confidence},
        window=params.window,
        detail=detail
        + (f": no gain above {params.min_gain_pp:g} pp over {params.window} evaluations" if breach else ""),
    )


SPEC = MonitorSpec(
    name="plateau",
    about="no significant shadow-set gain over the last K evaluations (stop: the line ends early, its verdict runs)",
    params=Plateau,
    checked=("eval",),
    read=read,
    reads=(SignalPath("eval_completed.item_sampled"),),
    runbook=Runbook(
        means="the line has stopped improving on held-out items: more steps of the same spend money without changing "
        "the verdict",
        tries=(
            "let it end (the default action, stop): the release verdict runs on the checkpoint the shadow set chose",
            "if it was set to halt: rc1 advance --stop --because …, or go on: rc1 advance --because …",
            "for a next run: a higher learning rate or more varied items (priority_sampling)",
        ),
    ),
)
