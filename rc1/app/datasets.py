"""Building the gated data inputs: shadow set, seed pool, balanced pool — the same code for the rounds
and for the stage commands (`rc1 pool build`, `rc1 shadow materialize`, `rc1 difficulty …`).

Seed pool: `data.pool_size` items in the task mix, each dressed as an episode from the template pack.
Each generator is asked for its own mix of difficulties (`GENERATOR_DIFFICULTY_MIX`) because measured
difficulty, not the generator's label, decides the buckets, and the labels measure differently per task. Balanced pool:
the seed pool rebalanced per task to `data.difficulty_target` (rc1.data.balance); training uses it.
In live episodes a generated task's items keep their generator's label (rc1/data/task_difficulty.py `given_tasks`):
its slots ask for `data.difficulty_target`, as a task of yours does.
"""

from __future__ import annotations

import json

import msgspec

from rc1.config.loading import LoadedConfig
from rc1.config.schema import Config
from rc1.core.fsutil import atomic_write_bytes, atomic_write_text, sha256_file
from rc1.core.progress import progress
from rc1.core.workspace import Workspace
from rc1.data import pool as pool_builder
from rc1.data.balance import Balanced, rebalance
from rc1.data.difficulty import ItemMetrics, measure
from rc1.data.environment import PageModel
from rc1.data.episodes import dress
from rc1.data.sources import measuring, pool_sources, replace_from_sources, shadow_sources
from rc1.data.task import TaskItem
from rc1.data.task_difficulty import given_tasks
from rc1.data.templates import TemplatePack, load_pack

# What each generator is asked for, so that the measured buckets can meet easy 0.25 / medium 0.45 /
# hard 0.30 with as few items dropped as possible. Calibrated on 9,000 built-in items: the share of each
# generator label that measures easy/medium/hard, e.g. a generated gsm8k item measures hard only when
# generated hard (34% of those), so gsm8k asks for mostly hard ones. The context tasks keep a fifth
# generated easy: only those restate their evidence sentence, and the easy bucket's median clue_overlap
# must reach 0.40. Expected share kept: gsm8k ~0.74, hotpotqa ~0.88, strategyqa ~0.92 (the balanced
# pool keeps the smallest, the task mix being exact).
GENERATOR_DIFFICULTY_MIX = {
    "gsm8k": {"easy": 0.25, "medium": 0.10, "hard": 0.65},
    "hotpotqa": {"easy": 0.20, "medium": 0.40, "hard": 0.40},
    "strategyqa": {"easy": 0.20, "medium": 0.30, "hard": 0.50},
}

# The same, for a task whose items come from an official file (`data.sources`): a slot's difficulty is
# how its record is dressed (rc1/data/sources.py). Real records are short beside generated ones, so a
# medium slot measures easy 80-85% of the time and a hard slot spreads over all three buckets (StrategyQA
# dev: ~30% hard, ~35% medium, ~35% easy); no slot is asked for medium. Calibrated on the official files
# (GSM8K train, StrategyQA dev) over seeds 1234, 7, 99: the task keeps 0.67-0.69 (StrategyQA dev), 0.72-0.85 (GSM8K
# train) of its items, against 0.22 with the generators' mix. HotpotQA has no file to calibrate on here:
# its sources keep the generator's mix.
# A task of yours keeps its records' own difficulty (declared, measured or voted: rc1/data/task_difficulty.py): its
# slots ask for data.difficulty_target, so that a task whose records cover it is balanced whole.

SOURCE_DIFFICULTY_MIX = {
    "gsm8k": {"easy": 0.10, "medium": 0.0, "hard": 0.90},
    "strategyqa": {"easy": 0.20, "medium": 0.0, "hard": 0.80},
}


# These take the config and the run's paths, never the writing session: they build and write files, and the
# stage that calls them appends the events.


def template_pack(loaded: LoadedConfig) -> TemplatePack:
    return load_pack(loaded.templates_path)


def dress_items(
    loaded: LoadedConfig, items: list[TaskItem], seed: int, stream: str, pack: TemplatePack | None = None
) -> list[TaskItem]:
    """`pack`: the template pack when the caller holds it already (fresh items dress one at a time)."""
    data = loaded.config.data
    return dress(
        items,
        pack or template_pack(loaded),
        seed=seed,
        stream=stream,
        max_turns=data.max_turns,
        max_tool_hops=data.max_tool_hops,
        clarify_rate=data.clarify_rate,
        tools=list(data.tools),
        episodes=data.episodes,
    )


class HeldOut(msgspec.Struct, frozen=True):
    """The two held-out sets: the shadow set (periodic evaluation, choosing best/) and the gate set (the release
    verdict alone, never used to choose anything)."""

    shadow: list[TaskItem]
    gate: list[TaskItem]


def build_held_out(loaded: LoadedConfig, ws: Workspace) -> HeldOut:
    """Both held-out sets from `data.shadow_seed`. Where a task names held-out records (`shadow_path`,
    `shadow_split`), its shadow and gate slots draw them in one pass, so no record is in both; the shadow slots
    come first and get the records they would get alone."""
    data, release = loaded.config.data, loaded.config.release
    shadow = pool_builder.build_shadow(data.shadow_size, data.mix, data.shadow_seed)
    gate = pool_builder.build_gate(release.gate_size, data.mix, list(release.tasks), data.shadow_seed)
    both = replace_from_sources(
        shadow + gate, shadow_sources(data, loaded.resolve, measuring(loaded, ws)), data.shadow_seed, by_difficulty=True
    )
    shadow, gate = both[: len(shadow)], both[len(shadow) :]
    return HeldOut(
        shadow=dress_items(loaded, shadow, data.shadow_seed, "shadow"),
        gate=dress_items(loaded, gate, data.shadow_seed, "gate"),
    )


def build_seed_pool(loaded: LoadedConfig, ws: Workspace) -> list[TaskItem]:
    data, seed = loaded.config.data, loaded.config.run.seed
    sources = pool_sources(data, loaded.resolve, measuring(loaded, ws))
    slot_mix = {
        **GENERATOR_DIFFICULTY_MIX,
        **{t: m for t, m in SOURCE_DIFFICULTY_MIX.items() if t in sources},
        # Tasks whose items keep their own difficulty (yours; generated ones in live episodes) ask for the target.
        **dict.fromkeys(given_tasks(data), dict(data.difficulty_target)),
    }
    pool = pool_builder.build_pool(data.pool_size, data.mix, seed, slot_mix)
    pool = replace_from_sources(pool, sources, seed, by_difficulty=False)
    return dress_items(loaded, pool, seed, "pool")


def measure_all(items: list[TaskItem], pages_by: PageModel = "titles") -> list[ItemMetrics]:
    """Every item's metrics; a live item's on its gold path under `pages_by` (data.pages)."""
    with progress("measuring difficulty", total=len(items)) as bar:
        metrics = []
        for item in items:
            metrics.append(measure(item, pages_by))
            bar.update()
    return metrics


def balance(config: Config, pool: list[TaskItem], metrics: list[ItemMetrics]) -> Balanced:
    """Tasks of yours, and in live episodes the generated built-in ones, are balanced on their items' own difficulty
    (rc1/data/task_difficulty.py `given_tasks`), the other built-in ones on the metrics' vote."""
    data = config.data
    return rebalance(
        pool, metrics, dict(data.difficulty_target), dict(data.mix), config.run.seed, given=given_tasks(data)
    )


def write_metrics(ws: Workspace, metrics: list[ItemMetrics]) -> None:
    encoder = msgspec.json.Encoder()
    atomic_write_bytes(ws.metrics_path, b"".join(encoder.encode(m) + b"\n" for m in metrics))


def write_manifest(config: Config, path, manifest_path, items: list[TaskItem]) -> None:
    """A held-out set's manifest (data/<run>/shadow_manifest.json, gate_manifest.json): size, seed, per-cell
    counts, ids and the file's sha256."""
    cells: dict[str, int] = {}
    for item in items:
        key = f"{item.task}/{item.difficulty}"
        cells[key] = cells.get(key, 0) + 1
    manifest = {
        "n": len(items),
        "seed": config.data.shadow_seed,
        "sha256": sha256_file(path),
        "cells": dict(sorted(cells.items())),
        "ids": [item.id for item in items],
        "needs_clarification": sum(item.needs_clarification for item in items),
    }
    atomic_write_text(manifest_path, json.dumps(manifest, indent=2) + "\n")
