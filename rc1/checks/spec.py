"""A preflight check as an entry of the one table the rounds run (rc1/app/checks.py): its name, the rounds and
commands that run it, the config keys its limits come from with their production floors, its runbook entry, and the
function that runs it on a round's inputs. Each entry stands in its check's module, beside the code it runs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import msgspec

from rc1.checks.result import CheckResult
from rc1.config.loading import LoadedConfig
from rc1.config.schema import Config
from rc1.core.runbook import Runbook
from rc1.core.workspace import Workspace
from rc1.data.balance import Balanced
from rc1.data.difficulty import ItemMetrics
from rc1.data.task import TaskItem
from rc1.data.templates import TemplatePack
from rc1.scoring.judge import Judge
from rc1.scoring.pipeline import ScoringPipeline

Command = Literal["pool validate", "difficulty validate"]


class Floor(msgspec.Struct, frozen=True, array_like=True):
    """The loosest value a production config may set for a threshold key, and its stricter side: "min" may be
    raised, never lowered (distinct-2 ≥ 0.60 may become ≥ 0.70); "max" may be lowered, never raised."""

    side: Literal["min", "max"]
    bound: int | float


@dataclass(frozen=True)  # holds live objects (the scorer, a judge), not data to encode
class RoundInputs:
    """What a check reads: the run's config and workspace, the materialized data and the round's scorer. A
    standalone command (`rc1 pool validate`) fills only what its checks read."""

    loaded: LoadedConfig
    ws: Workspace
    round_no: int = 0  # 0: a standalone command, not a round
    pool: list[TaskItem] = field(default_factory=list)
    shadow: list[TaskItem] = field(default_factory=list)
    gate: list[TaskItem] = field(default_factory=list)
    metrics: list[ItemMetrics] = field(default_factory=list)
    balanced: Balanced | None = None
    on_disk_balanced: list[TaskItem] = field(default_factory=list)  # round 2: the balanced pool round 1 wrote
    templates: TemplatePack | None = None
    pipeline: ScoringPipeline | None = None
    judge: Judge | None = None
    floors: dict[str, Floor] = field(default_factory=dict)  # every threshold key's production floor (the table's)

    @property
    def config(self) -> Config:
        return self.loaded.config


class Check(msgspec.Struct, frozen=True, kw_only=True):
    name: str  # the CheckResult's name, and its event's
    rounds: tuple[int, ...]  # the preflight rounds that run it
    runbook: Runbook
    run: Callable[..., CheckResult | None]  # on RoundInputs; it returns None where it does not apply (no judge)
    commands: tuple[Command, ...] = ()  # the standalone commands that run it too
    thresholds: dict[str, Floor | None] = {}  # config keys of its limits -> production floor (None: none)


PROBE_ITEMS = 8  # the items a round's probes take from the shadow set (`rc1 scorer probe --n` for another number)


def spread(items: list[TaskItem], n: int) -> list[TaskItem]:
    """`n` items taken evenly through the list (the shadow set is ordered by task and difficulty)."""
    if len(items) <= n:
        return list(items)
    return [items[i * len(items) // n] for i in range(n)]
