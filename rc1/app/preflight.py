"""Rounds 1 and 2: materialize and check every gated input, then open (or refuse) the gate.

Round 1 builds the held-out sets (shadow and gate), the seed pool and the balanced pool, and checks them.
Round 2 reads them back from disk, requires the fingerprints round 1 recorded, re-runs every check, verifies
that rebalancing the seed pool still gives the balanced pool on disk, and adds the live scorer self-check, the
pre-run shadow check and shadow run (tagged `pre_run_check`), and `release_power`: the step-0 policy on the gate
set, and whether a verdict on it can tell the threshold's gain from noise.
"""

from __future__ import annotations

from rc1.app import datasets
from rc1.app.artifacts import write_artifact, write_held_out
from rc1.app.checks import PRODUCTION_FLOORS, RoundContext, run_checks
from rc1.app.datasets import HeldOut
from rc1.app.difficulty_probe import probe_measured_tasks
from rc1.app.gate import ensure_inputs_unchanged, record_checks, require_allowed
from rc1.app.heap import cyclic_gc_paused
from rc1.app.scoring import RunScoring, judge_buildable, open_scoring, policy_thinking
from rc1.app.session import Session
from rc1.checks.result import CheckResult
from rc1.checks.sources import shortfall_check
from rc1.checks.spec import RoundInputs
from rc1.config.kept import keep_inputs
from rc1.core.errors import BadInput
from rc1.data.balance import Balanced
from rc1.data.difficulty import ItemMetrics
from rc1.data.fingerprints import current_fingerprints
from rc1.data.sources import SourceShortfall
from rc1.data.task import TaskItem, read_items
from rc1.data.user_tools import tools_of
from rc1.run import events as ev


def pool_checks(session: Session, pool: list[TaskItem], shadow: list[TaskItem]) -> list[CheckResult]:
    """The checks of the seed pool alone (`rc1 pool validate`: the table's entries that name it); the pool is the
    one on disk."""
    inputs = RoundInputs(
        loaded=session.loaded, ws=session.ws, pool=pool, shadow=shadow, templates=datasets.template_pack(session.loaded)
    )
    return run_checks(inputs, command="pool validate")


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


def materialize(session: Session) -> tuple[list[TaskItem], HeldOut, list[ItemMetrics], Balanced]:
    # A task of yours whose difficulty is measured: the base model's labels first, then the sets drawn from them.
    probe_measured_tasks(session)
    # All built before any is written: a source that falls short leaves the files on disk as they were.
    held = datasets.build_held_out(session.loaded, session.ws)
    pool = datasets.build_seed_pool(session.loaded, session.ws)
    write_held_out(session, held)
    write_artifact(session, session.ws.pool_path, pool, "pool")
    metrics = datasets.measure_all(pool, session.config.data.pages)
    datasets.write_metrics(session.ws, metrics)
    balanced = datasets.balance(session.config, pool, metrics)
    write_artifact(session, session.ws.balanced_pool_path, balanced.items, "balanced_pool")
    return pool, held, metrics, balanced


def run_round1(session: Session) -> None:
    require_allowed(session, "round1_passed", "round 1")
    tools_of(session.loaded)  # your tools import and have the schema TRL renders, or the round is refused (exit 2)
    # The run's own weights and templates from here on: the round checks and fingerprints the copies it keeps.
    session.loaded = keep_inputs(session.ws, session.loaded)
    scoring = round_scoring(session, 1)
    with cyclic_gc_paused():
        try:
            pool, held, metrics, balanced = materialize(session)
        except SourceShortfall as short:  # nothing to check the data with: the round fails on this alone
            results = [shortfall_check(short.missing)]
        else:
            results = run_checks(_context(session, 1, scoring, pool, held, metrics, balanced), round_no=1)
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
        metrics = datasets.measure_all(pool, session.config.data.pages)
        balanced = datasets.balance(session.config, pool, metrics)
        results = run_checks(_context(session, 2, scoring, pool, held, metrics, balanced, on_disk), round_no=2)
    record_checks(session, 2, results, fingerprints, _drain(scoring))


def _context(
    session: Session,
    round_no: int,
    scoring: RunScoring,
    pool: list[TaskItem],
    held: HeldOut,
    metrics: list[ItemMetrics],
    balanced: Balanced,
    on_disk_balanced: list[TaskItem] | None = None,
) -> RoundContext:
    """What the table's checks read in a round: the data as built (round 1) or read back (round 2), the scorer,
    every threshold's production floor, and the session (the step-0 policy is built from it on first use)."""
    return RoundContext(
        loaded=session.loaded,
        ws=session.ws,
        round_no=round_no,
        pool=pool,
        shadow=held.shadow,
        gate=held.gate,
        metrics=metrics,
        balanced=balanced,
        on_disk_balanced=on_disk_balanced or [],
        templates=datasets.template_pack(session.loaded),
        pipeline=scoring.pipeline,
        judge=scoring.judge,
        floors=PRODUCTION_FLOORS,
        session=session,
    )


def _drain(scoring: RunScoring) -> ev.ScoringSummary:
    return scoring.judge.ledger.drain() if scoring.judge is not None else ev.ScoringSummary()


def _read(path) -> list[TaskItem]:
    if not path.exists():
        raise BadInput(f"{path}: missing; it was written by round 1 — run `rc1 advance` from INIT to rebuild it")
    return read_items(path)


__all__ = ["materialize", "pool_checks", "run_round1", "run_round2"]
