"""Rounds 1 and 2: materialize and check every gated input, then open (or refuse) the gate.

Round 1 builds the held-out sets (shadow and gate), the seed pool and the balanced pool, and checks them.
Round 2 reads them back from disk, requires the fingerprints round 1 recorded, re-runs every check, verifies
that rebalancing the seed pool still gives the balanced pool on disk, and adds the live scorer self-check, the
pre-run shadow check and shadow run (tagged `pre_run_check`), and `release_power`: the step-0 policy on the gate
set, and whether a verdict on it can tell the threshold's gain from noise.
"""

from __future__ import annotations

import json

from rc1.app import datasets
from rc1.app.artifacts import write_artifact, write_held_out
from rc1.app.datasets import HeldOut
from rc1.app.gate import ensure_inputs_unchanged, record_checks, require_allowed
from rc1.app.gate_set import Policy, release_power_check
from rc1.app.heap import cyclic_gc_paused
from rc1.app.scoring import RunScoring, judge_buildable, open_scoring, policy_thinking
from rc1.app.session import Session
from rc1.app.shadow_run import pre_run_shadow_run
from rc1.checks import coverage, diversity, duplicates, leak, ngram_kl, resources, weights
from rc1.checks.consistency import training_config_check
from rc1.checks.gate_set import gate_set_check
from rc1.checks.overclar import overclar_check
from rc1.checks.result import CheckResult
from rc1.checks.reward_functions import reward_functions_check
from rc1.checks.scorer import scorer_cache, scorer_live, scorer_probe, scorer_selfcheck
from rc1.checks.seed_pool import seed_pool_check
from rc1.checks.shadow import shadow_stratification
from rc1.checks.sources import data_sources_check, shortfall_check
from rc1.config.kept import keep_config
from rc1.core.errors import BadInput
from rc1.core.fsutil import sha256_file
from rc1.core.runbook import Runbook
from rc1.data.balance import Balanced
from rc1.data.difficulty import ItemMetrics
from rc1.data.fingerprints import current_fingerprints
from rc1.data.sources import SourceShortfall, pool_sources, shadow_sources
from rc1.data.task import TaskItem, read_items
from rc1.run import events as ev
from rc1.scoring.archive import archive_estimate_gb
from rc1.scoring.pipeline import components_for

PROBE_ITEMS = 8  # judge calls a round's probe makes (`rc1 scorer probe --n` for another number)


def pool_checks(session: Session, pool: list[TaskItem], shadow: list[TaskItem]) -> list[CheckResult]:
    """The checks of the seed pool alone (also `rc1 pool validate`); the pool is the one on disk."""
    t = session.config.preflight
    pool_sha256 = sha256_file(session.ws.pool_path)
    return [
        seed_pool_check(pool, session.config.data, datasets.template_pack(session.loaded), pool_sha256),
        diversity.distinct2(pool, t.min_distinct2),
        ngram_kl.ngram_kl(pool, t.min_ngram_kl),
        coverage.framing_coverage(pool, t.min_roles, t.min_styles),
        duplicates.duplicate_rate(pool, t.max_duplicate_rate, t.near_duplicate_similarity),
        diversity.length_bounds(pool, t.min_len_tokens, t.max_len_tokens),
        leak.leak_check(pool, shadow, t.leak_ngram, t.leak_similarity),
        diversity.task_mix(pool, session.config.data.mix, t.mix_tolerance),
    ]


def data_checks(
    session: Session,
    pool: list[TaskItem],
    held: HeldOut,
    metrics: list[ItemMetrics],
    balanced: Balanced,
    scoring: RunScoring,
    round_no: int,
) -> list[CheckResult]:
    config = session.config
    t = config.preflight
    resolve = session.loaded.resolve
    shadow = held.shadow
    return [
        data_sources_check(pool, shadow, pool_sources(config.data, resolve), shadow_sources(config.data, resolve)),
        shadow_stratification(shadow, config.data.shadow_size, config.data.mix),
        gate_set_check(
            held.gate,
            shadow,
            pool,
            size=config.release.gate_size,
            tasks=list(config.release.tasks),
            ngram=t.leak_ngram,
            similarity=t.leak_similarity,
        ),
        *pool_checks(session, pool, shadow),
        datasets.difficulty_check(session.config, session.ws, pool, metrics, balanced),
        weights.weights_check(
            session.loaded.weights_path,
            components_for(session.loaded),
            declared={spec.name: spec.weight for spec in config.reward.functions},
        ),
        reward_functions_check(
            config.reward.functions,
            session.loaded.path.parent,
            spread(shadow, PROBE_ITEMS),
            thinking=scoring.pipeline.rule.thinking,
        ),
        overclar_check(config.reward, scoring.pipeline),
        *scorer_checks(session, shadow, scoring, round_no),
        training_config_check(config),
        resources.free_disk(session.ws.root, t.min_free_disk_gb, archive_gb=archive_estimate_gb(config)),
        resources.accelerator_memory(t.min_accelerator_memory_gb),
    ]


def round_scoring(session: Session, round_no: int) -> RunScoring:
    """The run's scorer for a round (the judge only where it can be built: `scorer_live` says why not)."""
    thinking = policy_thinking(session.loaded)
    scoring = open_scoring(
        session.loaded,
        session.ws,
        thinking,
        with_weights=False,
        with_judge=judge_buildable(session.loaded),
        with_functions=False,
    )
    if scoring.judge is not None:
        scoring.judge.ledger.scope = f"round{round_no}"
    return scoring


def scorer_checks(
    session: Session, shadow: list[TaskItem], scoring: RunScoring, round_no: int, probe_items: int = PROBE_ITEMS
) -> list[CheckResult]:
    """The scorer is live and real: its key and provider, a probe of real calls, no replayed scores."""
    results = [scorer_live(session.config)]
    if scoring.judge is not None:
        results.append(scorer_probe(scoring.judge, spread(shadow, probe_items)))
    ceiling = (
        session.config.preflight.max_cache_hit_rate_round1
        if round_no == 1
        else session.config.preflight.max_cache_hit_rate_round2
    )
    results.append(scorer_cache(session.ws.ledger_path, ceiling))
    return results


def spread(items: list[TaskItem], n: int) -> list[TaskItem]:
    """`n` items taken evenly through the list (the shadow set is ordered by task and difficulty)."""
    if len(items) <= n:
        return list(items)
    return [items[i * len(items) // n] for i in range(n)]


def materialize(session: Session) -> tuple[list[TaskItem], HeldOut, list[ItemMetrics], Balanced]:
    # All built before any is written: a source that falls short leaves the files on disk as they were.
    held = datasets.build_held_out(session.loaded)
    pool = datasets.build_seed_pool(session.loaded)
    write_held_out(session, held)
    write_artifact(session, session.ws.pool_path, pool, "pool")
    metrics = datasets.measure_all(pool)
    datasets.write_metrics(session.ws, metrics)
    balanced = datasets.balance(session.config, pool, metrics)
    write_artifact(session, session.ws.balanced_pool_path, balanced.items, "balanced_pool")
    return pool, held, metrics, balanced


def run_round1(session: Session) -> None:
    require_allowed(session, "round1_passed", "round 1")
    scoring = round_scoring(session, 1)
    with cyclic_gc_paused():
        try:
            pool, held, metrics, balanced = materialize(session)
        except SourceShortfall as short:  # nothing to check the data with: the round fails on this alone
            results = [shortfall_check(short.missing)]
        else:
            results = data_checks(session, pool, held, metrics, balanced, scoring, 1)
    keep_config(session.ws, session.loaded)  # what every later command on the run uses while this gate holds
    record_checks(session, 1, results, current_fingerprints(session.ws, session.loaded), _drain(scoring))


def run_round2(session: Session) -> None:
    require_allowed(session, "round2_passed", "round 2")
    recorded = session.projection.gates["round1"].fingerprints
    fingerprints = ensure_inputs_unchanged(session, recorded, "round 1")
    ws = session.ws
    scoring = round_scoring(session, 2)
    with cyclic_gc_paused():
        pool, on_disk = _read(ws.pool_path), _read(ws.balanced_pool_path)
        held = HeldOut(shadow=_read(ws.shadow_path), gate=_read(ws.gate_path))
        metrics = datasets.measure_all(pool)
        balanced = datasets.balance(session.config, pool, metrics)
        results = data_checks(session, pool, held, metrics, balanced, scoring, 2)
        results += [
            _same_balanced_pool(on_disk, balanced),
            scorer_selfcheck(held.shadow, scoring.pipeline.rule),
            pre_run_shadow_check(session, held.shadow, on_disk),
        ]
    policy = base_policy(session)  # for the built-in model: builds and warm-starts it, cached for training
    results.append(pre_run_shadow_run(session, policy))
    results.append(release_power_check(session, policy))
    record_checks(session, 2, results, fingerprints, _drain(scoring))


def base_policy(session: Session) -> Policy:
    """The step-0 policy: the base model before any adapter or update."""
    from rc1.app.policy import load_run_policy

    model, tokenizer, device, _ = load_run_policy(session, _read(session.ws.balanced_pool_path))
    return Policy(model, tokenizer, device)


def _drain(scoring: RunScoring) -> ev.ScoringSummary:
    return scoring.judge.ledger.drain() if scoring.judge is not None else ev.ScoringSummary()


def _same_balanced_pool(on_disk: list[TaskItem], rebuilt: Balanced) -> CheckResult:
    same = on_disk == rebuilt.items
    return CheckResult(
        name="balanced_pool_reproduces",
        passed=same,
        measured={"on_disk": float(len(on_disk)), "rebuilt": float(len(rebuilt.items)), "identical": float(same)},
        thresholds={"identical": 1.0},
        detail="rebalancing the seed pool gives the balanced pool on disk"
        if same
        else "rebalancing the seed pool no longer gives the balanced pool on disk: rebuild it with `rc1 advance` from "
        "INIT",
    )


def pre_run_shadow_check(session: Session, shadow: list[TaskItem], train_pool: list[TaskItem]) -> CheckResult:
    """The shadow set about to be evaluated is the one materialized, and training never sees it."""
    problems = []
    path = session.ws.shadow_manifest_path
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        manifest = {}
        problems.append(f"{path}: unreadable ({e})")
    if manifest and manifest.get("sha256") != sha256_file(session.ws.shadow_path):
        problems.append(f"{session.ws.shadow_path}: sha256 differs from its manifest")
    if manifest and manifest.get("ids") != [item.id for item in shadow]:
        problems.append("shadow ids differ from the manifest's")
    shadow_questions = {item.question for item in shadow}
    shadow_ids = {item.id for item in shadow}
    seen = sum(1 for item in train_pool if item.id in shadow_ids or item.question in shadow_questions)
    if seen:
        problems.append(f"{seen} training items share an id or a question with the shadow set")
    return CheckResult(
        name="shadow_pre_run",
        passed=not problems,
        tags=["pre_run_check"],
        measured={
            "shadow_items": float(len(shadow)),
            "training_items_seen_in_shadow": float(seen),
            "manifest_ok": float(bool(manifest) and not problems),
        },
        thresholds={"training_items_seen_in_shadow": 0.0},
        detail="; ".join(problems)
        if problems
        else f"{len(shadow)} shadow items match their manifest; none is in the training pool",
    )


def _read(path) -> list[TaskItem]:
    if not path.exists():
        raise BadInput(f"{path}: missing; it was written by round 1 — run `rc1 advance` from INIT to rebuild it")
    return read_items(path)


RUNBOOK: dict[str, Runbook] = {
    "balanced_pool_reproduces": Runbook(
        means="rebalancing the seed pool now gives other items than pool_balanced.jsonl on disk: the difficulty "
        "metrics or the rebalancing changed since round 1 ran (another rc1 version)",
        tries=(
            "run round 2 with the rc1 that ran round 1 (run_started records its code version; rc1 --version)",
            "or rebuild every input with this version: start a new run, rc1 advance --run <new name>",
        ),
    ),
    "shadow_pre_run": Runbook(
        means="the shadow set about to be evaluated is not the one round 1 materialized (its manifest is missing, "
        "unreadable or names another sha256 or ids), or training items share an id or a question with it",
        tries=(
            "restore data/<run>/shadow_manifest.json as round 1 wrote it; rc1 audit checks the gated inputs "
            "against round 1's fingerprints",
            "if the held-out sets must change, rebuild every input: rc1 advance --run <new name>, or change an "
            "input with --accept-changed-inputs so both rounds run again",
            "training items in the shadow set: make data.sources.<task>.shadow_path / shadow_split disjoint from "
            "path / split",
        ),
    ),
}


__all__ = ["data_checks", "materialize", "pool_checks", "run_round1", "run_round2"]
