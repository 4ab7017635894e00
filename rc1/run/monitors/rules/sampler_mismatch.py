"""sampler_mismatch: the rollout engine's log-probabilities of the tokens it sampled, against the trainer's of the same
tokens, apart by more than `max_mean` nats on average over the last `window` steps. TRL 1.16 logs the gap where vLLM
samples with its importance-sampling correction on (`sampling/sampling_logp_difference/mean`); where transformers
samples a TRL trainer's rollouts rc1 measures the same gap itself (rc1/train/sampler_gap.py). Either is recorded as
`train_step.diagnostics.sampling_logp_difference`. The two engines compute in different kernels and precisions, and a
top-k or top-p cut renormalises the sampled side, so a healthy line has a gap of its own; a gap that grows says the
rollout model is not the one being trained: a weight sync that did not happen or sent the wrong tensors, a drifted
base (trl#6688), a sampler setting one engine ignores. prime-rl documents the same signal as its early warning of a
stale or diverging inference engine.

Measured here (docs/monitors-and-runbook.md): the embedded default's healthy lines, and the planted stale rollout
model (tests/e2e/test_sampler_mismatch.py), which trips it. Not measured: a healthy vLLM line's gap (no GPU here).
Lines whose engine records no gap (rc1's torch engine, online DPO, SFT) are not read."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta

from rc1.core.runbook import Runbook
from rc1.run.monitors.rules.window import window_mean
from rc1.run.monitors.spec import Action, MonitorSpec, RuleParams, SignalPath, its_window
from rc1.run.monitors.state import MonitorState, Reading

GAP = SignalPath("train_step.diagnostics.sampling_logp_difference", each_step=True, sampled=True)


class SamplerMismatch(RuleParams):
    """The rollout engine's and the trainer's log-probabilities of the sampled tokens apart (TRL's
    sampling/sampling_logp_difference/mean under vLLM, rc1's measurement of it under transformers), averaged over
    `window` steps, above `max_mean`."""

    max_mean: Annotated[
        float,
        Meta(gt=0.0, description="Trips when the window's mean absolute log-probability gap (nats) exceeds this."),
    ] = 0.05
    window: Annotated[int, Meta(ge=1, description="Steps in the window.")] = 5
    action: Annotated[Action, Meta(description="warn, halt or stop (end the line early as complete).")] = "warn"


def read(params: SamplerMismatch, state: MonitorState) -> Reading | None:
    gap = window_mean(state.watch.steps, GAP.path, params.window)
    if gap is None:
        return None
    breach = gap > params.max_mean
    return Reading(
        step=state.step,
        value=gap,
        threshold=params.max_mean,
        breach=breach,
        measured={"logp_difference": gap},
        thresholds={"max_mean": params.max_mean},
        window=params.window,
        detail=f"the rollout engine's log-probabilities are {gap:.3f} nats from the trainer's on average over the "
        f"last {params.window} steps" + (f" (more than {params.max_mean})" if breach else ""),
    )


SPEC = MonitorSpec(
    name="sampler_mismatch",
    about="the rollout engine's log-probabilities apart from the trainer's over a window of steps",
    params=SamplerMismatch,
    checked=("step",),
    read=read,
    reads=(GAP,),
    steps_needed=its_window,
    runbook=Runbook(
        means="the rollouts are sampled from a model that is not the one being trained: a vLLM weight sync that was "
        "skipped or sent stale tensors, a base that drifted under in-place adapter merges, or a sampling setting only "
        "one engine applies; the importance ratios then correct for a policy that no longer exists",
        tries=(
            "check that the base did not move: rc1 status (the frozen_base guard) and the line's checkpoint records",
            "compare with transformers' own rollouts on the same checkpoint: --set train.rollouts=hf (exact, slower)",
            "read the steps where the gap grew: rc1 replay --until step_N --json",
        ),
    ),
)
