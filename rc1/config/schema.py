"""The run config's schema: `Config`, the top-level struct, assembled from its sections in the config's order. Each
section is a msgspec Struct in rc1/config/sections/ (one module per group), each key with its type, bounds and
default, and the help `rc1 config explain` prints; every name is re-exported here, so `from rc1.config.schema import
TrainConfig` is the one way to import them. Reading a file into it is rc1/config/loading.py."""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import Meta

from rc1.config.sections.base import (
    NonNegativeFloat,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
    Probability,
    Section,
)
from rc1.config.sections.data import DataConfig
from rc1.config.sections.gates import PreflightConfig, ReleaseConfig, ReleaseMetric, ShadowConfig
from rc1.config.sections.outputs import RolloutsConfig, TrackingConfig
from rc1.config.sections.reward import RewardConfig, RewardFunctionConfig
from rc1.config.sections.run import EngineConfig, FinetuneConfig, LoraConfig, ModelConfig, RunConfig
from rc1.config.sections.scorer import ScorerConfig, ScorerProvider
from rc1.config.sections.tasks import SourceConfig, TaskConfig
from rc1.config.sections.train import PrioritySamplingConfig, TrainConfig
from rc1.core.catalog import Profile
from rc1.run.monitors.sections import MonitorsConfig

__all__ = [
    "Config",
    "DataConfig",
    "EngineConfig",
    "FinetuneConfig",
    "LoraConfig",
    "ModelConfig",
    "MonitorsConfig",
    "NonNegativeFloat",
    "NonNegativeInt",
    "PositiveFloat",
    "PositiveInt",
    "PreflightConfig",
    "PrioritySamplingConfig",
    "Probability",
    "ReleaseConfig",
    "ReleaseMetric",
    "RewardConfig",
    "RewardFunctionConfig",
    "RolloutsConfig",
    "RunConfig",
    "ScorerConfig",
    "ScorerProvider",
    "Section",
    "ShadowConfig",
    "SourceConfig",
    "TaskConfig",
    "TrackingConfig",
    "TrainConfig",
]


class Config(Section):
    """An rc1 run: the YAML file given by --config, with --set overrides."""

    profile: Annotated[
        Profile,
        Meta(
            description="Which limits the training_config check holds the run to: production (the production floors, "
            "a live API judge, qlora, ≥ 3 seeds, ≥ 50,000 steps, …), smoke (the production path checked before "
            "committing to it: production's floors, judge and adapter, at most 2,000 steps; its verdict is computed "
            "and labelled not a release) or local (the embedded default's smaller ones)."
        ),
    ]
    run: RunConfig
    data: DataConfig
    model: ModelConfig
    train: TrainConfig
    preflight: PreflightConfig = msgspec.field(default_factory=PreflightConfig)
    finetune: FinetuneConfig = msgspec.field(default_factory=FinetuneConfig)
    engine: EngineConfig = msgspec.field(default_factory=EngineConfig)
    reward: RewardConfig = msgspec.field(default_factory=RewardConfig)
    scorer: ScorerConfig = msgspec.field(default_factory=ScorerConfig)
    release: ReleaseConfig = msgspec.field(default_factory=ReleaseConfig)
    shadow: ShadowConfig = msgspec.field(default_factory=ShadowConfig)
    priority_sampling: PrioritySamplingConfig | None = None
    rollouts: RolloutsConfig = msgspec.field(default_factory=RolloutsConfig)
    tracking: TrackingConfig = msgspec.field(default_factory=TrackingConfig)
    monitors: MonitorsConfig = msgspec.field(default_factory=MonitorsConfig)
