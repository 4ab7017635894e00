"""Rounds 1 and 2: materialize and check every gated input, then open (or refuse) the gate."""

from __future__ import annotations

from rc1.checks import diversity, duplicates, leak, resources, weights
from rc1.checks.consistency import training_config_check
from rc1.checks.result import CheckResult
from rc1.checks.scorer import scorer_selfcheck
from rc1.checks.shadow import shadow_stratification
from rc1.config import Config
from rc1.data import pool as pool_builder
from rc1.data.sources import pool_sources, replace_from_sources, shadow_sources
from rc1.data.task import TaskItem, read_items
from rc1.errors import BadInput
from rc1.fingerprints import current_fingerprints
from rc1.session import Session
from rc1.stages.artifacts import write_artifact
from rc1.stages.gate import ensure_inputs_unchanged, record_checks, require_allowed


def data_checks(session: Session, pool: list[TaskItem], shadow: list[TaskItem]) -> list[CheckResult]:
    config: Config = session.config
    thresholds = config.preflight
    return [
        shadow_stratification(shadow, config.data.shadow_size, config.data.mix),
        diversity.distinct2(pool, thresholds.min_distinct2),
        duplicates.duplicate_rate(pool, thresholds.max_duplicate_rate, thresholds.near_duplicate_similarity),
        diversity.length_bounds(pool, thresholds.min_len_tokens, thresholds.max_len_tokens),
        leak.leak_check(pool, shadow, thresholds.leak_ngram, thresholds.leak_similarity),
        diversity.task_mix(pool, config.data.mix, thresholds.mix_tolerance),
        weights.weights_check(session.loaded.weights_path),
        training_config_check(config),
        resources.free_disk(session.ws.root, thresholds.min_free_disk_gb),
    ]


def build_shadow(session: Session) -> list[TaskItem]:
    data = session.config.data
    shadow = pool_builder.build_shadow(data.shadow_size, data.mix, data.shadow_seed)
    sources = shadow_sources(data.sources, session.loaded.resolve)
    return replace_from_sources(shadow, sources, data.shadow_seed, by_difficulty=True)


def build_pool(session: Session) -> list[TaskItem]:
    data = session.config.data
    pool = pool_builder.build_pool(data.pool_size, data.mix, session.config.run.seed)
    sources = pool_sources(data.sources, session.loaded.resolve)
    return replace_from_sources(pool, sources, session.config.run.seed, by_difficulty=False)


def materialize(session: Session) -> tuple[list[TaskItem], list[TaskItem]]:
    shadow = build_shadow(session)
    write_artifact(session, session.ws.shadow_path, shadow, "shadow")
    pool = build_pool(session)
    write_artifact(session, session.ws.pool_path, pool, "pool")
    return pool, shadow


def run_round1(session: Session) -> None:
    require_allowed(session, "round1_passed", "round 1")
    pool, shadow = materialize(session)
    results = data_checks(session, pool, shadow)
    record_checks(session, 1, results, current_fingerprints(session.ws, session.loaded))


def run_round2(session: Session) -> None:
    require_allowed(session, "round2_passed", "round 2")
    recorded = session.projection.gates["round1"].fingerprints
    fingerprints = ensure_inputs_unchanged(session, recorded, "round 1")
    pool = _read(session.ws.pool_path)
    shadow = _read(session.ws.shadow_path)
    results = data_checks(session, pool, shadow) + [scorer_selfcheck(shadow)]
    record_checks(session, 2, results, fingerprints)


def _read(path) -> list[TaskItem]:
    if not path.exists():
        raise BadInput(f"{path}: missing; it was written by round 1 — run `rc1 advance` from INIT to rebuild it")
    return read_items(path)
