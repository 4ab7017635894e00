"""What a run sends out beside its log: `rollouts` (the rollout archive) and `tracking` (the experiment
trackers, the registry's: rc1/registry/trackers.py)."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from rc1.config.sections.base import PositiveInt, Section
from rc1.registry.trackers import TRACKERS

# tracking.report_to's help: each tracker's settings, from its spec (rc1/registry/trackers.py).
_TRACKERS_HELP = "; ".join(f"{name} ({spec.settings})" for name, spec in TRACKERS.items())


class RolloutsConfig(Section):
    """The rollout archive (rc1/scoring/archive.py): every sampled completion of training and of evaluation, with
    each reward component, the penalty, the difficulty factor and the reward; `rc1 rollouts` shows it and
    `rc1 audit --rescore` scores it again."""

    keep_text: Annotated[
        Literal["all", "every_n_steps", "none"],
        Meta(
            description="Whose completion text the archive keeps: all; training's every `every_n_steps` steps only "
            "(evaluations' always); or none. The scores of every completion are kept in every case."
        ),
    ] = "all"
    every_n_steps: Annotated[
        PositiveInt,
        Meta(description="With keep_text: every_n_steps, the training steps whose texts are kept: multiples of this."),
    ] = 100


class TrackingConfig(Section):
    """Experiment trackers, fed from the run's events (rc1/views/trackers.py): each step sent once, across a kill and
    a resume; a tracker that fails warns in logs/train.log and never stops training."""

    report_to: Annotated[
        list[Literal[tuple(TRACKERS)]],
        Meta(description=f"The trackers to send the run to: {_TRACKERS_HELP}. Empty: none."),
    ] = msgspec.field(default_factory=list)
