"""non_finite: a loss, a gradient norm or a trained weight that is not a finite number. Always on, always `halt`:
the trainer is stopped before the optimizer step applies the gradient (and so before any checkpoint could hold the
damage); a non-finite loss or weight found after a step halts before that step's checkpoint is published. Its trip
is not derived from earlier events: its own `measured` holds the value that was not finite."""

from __future__ import annotations

from rc1.core.runbook import Runbook
from rc1.run.monitors.spec import MonitorSpec, SignalPath

SPEC = MonitorSpec(
    name="non_finite",
    about="a non-finite loss, gradient norm or weight: halted before the optimizer step (always on)",
    # The trainer checks them before the step is logged (and the weights after it): nothing in the fold reads them.
    reads=(SignalPath("train_step.loss"), SignalPath("train_step.grad_norm")),
    runbook=Runbook(
        means="the update overflowed: the learning rate is too high for this model and precision, or a reward or "
        "advantage was not finite",
        tries=(
            "roll back with a lower learning rate: rc1 advance --from latest --set train.learning_rate=<lower> "
            "--because …",
            "tighten gradient clipping: --set train.max_grad_norm=<lower>",
            "check the rewards of the last steps: rc1 rollouts --step N --worst 5",
        ),
    ),
)
