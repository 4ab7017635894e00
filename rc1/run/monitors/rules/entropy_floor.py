"""entropy_floor: the policy's token entropy collapsing (the mean of the last `window` steps below `min_entropy`) or
jumping (that mean above `max_rise` times the mean of the window before it). A collapsed policy samples the same
reply for every prompt: each group's rewards tie and the gradient vanishes; a sudden rise is the policy coming apart,
often steps before a non-finite loss."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta

from rc1.core.runbook import Runbook
from rc1.run.monitors.rules.window import window_mean
from rc1.run.monitors.spec import Action, MonitorSpec, RuleParams, SignalPath
from rc1.run.monitors.state import MonitorState, Reading

ENTROPY = SignalPath("train_step.diagnostics.entropy", each_step=True, sampled=True)


class EntropyFloor(RuleParams):
    """Entropy collapse or a sudden rise: the mean token entropy (nats) of the last `window` steps' sampled replies
    (train_step.diagnostics.entropy)."""

    min_entropy: Annotated[
        float, Meta(ge=0.0, description="Trips when the window's mean entropy falls below this.")
    ] = 0.02
    max_rise: Annotated[
        Annotated[float, Meta(gt=1.0)] | None,
        Meta(
            description="Trips when the window's mean entropy exceeds this many times the mean of the window before "
            "it; null: no check of a rise."
        ),
    ] = 4.0
    window: Annotated[int, Meta(ge=1, description="Steps in the window.")] = 10
    action: Annotated[Action, Meta(description="warn, halt or stop (end the line early as complete).")] = "halt"


def read(params: EntropyFloor, state: MonitorState) -> Reading | None:
    steps = state.watch.steps
    now = window_mean(steps, ENTROPY.path, params.window)
    if now is None:
        return None
    thresholds = {"min_entropy": params.min_entropy}
    measured = {"entropy": now}
    before = window_mean(steps, ENTROPY.path, params.window, skip=params.window) if params.max_rise else None
    rose = False
    if before is not None:
        rise = now / max(before, 1e-9)
        thresholds["max_rise"] = params.max_rise
        measured.update(previous_entropy=before, rise=rise)
        rose = rise > params.max_rise
    fell = now < params.min_entropy
    if fell:
        detail = f"mean entropy {now:.4f} over the last {params.window} steps is below {params.min_entropy:g}"
    elif rose:
        detail = (
            f"mean entropy {now:.4f} over the last {params.window} steps is {measured['rise']:.1f}× the "
            f"{before:.4f} of the {params.window} before (more than {params.max_rise:g}×)"
        )
    else:
        detail = f"mean entropy {now:.4f} over the last {params.window} steps"
    return Reading(
        step=state.step,
        value=now,
        threshold=params.min_entropy,
        breach=fell or rose,
        measured=measured,
        thresholds=thresholds,
        window=params.window,
        detail=detail,
    )


SPEC = MonitorSpec(
    name="entropy_floor",
    about="token entropy below a floor (collapse) or rising sharply over a window of steps",
    params=EntropyFloor,
    checked=("step",),
    read=read,
    reads=(ENTROPY,),
    steps_needed=lambda params: params.window * (2 if params.max_rise else 1),  # a rise compares two windows
    runbook=Runbook(
        means="a collapse: the policy samples nearly one reply per prompt, so groups tie and nothing is learned; a "
        "rise: the update is too large and the policy is coming apart",
        tries=(
            "roll back and lower the learning rate: rc1 advance --from best --set train.learning_rate=<lower> "
            "--because …",
            "sample more widely: --set train.temperature=<higher> (training rollouts only; evaluations keep theirs)",
            "hold the policy nearer its start: --set train.beta=<higher> (with train.target_kl)",
        ),
    ),
)
