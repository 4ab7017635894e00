"""`rc1 calibrate`'s work: the step-0 evaluation's archived replies of a run (verified against the sha256 and the
per-item success their eval_completed recorded) and the run's weights in, a calibration report out
(rc1/scoring/calibration.py has the statistics). It reads the run and writes nothing: the command writes the report
where `Calibrated.path` says and shows it.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from rc1.config.loading import LoadedConfig
from rc1.core.errors import BadInput, GateClosed
from rc1.core.failure import utc_stamp
from rc1.core.workspace import Workspace
from rc1.eventlog.log import read_log
from rc1.run import events as ev
from rc1.scoring.archive import EVAL, EVAL_SAMPLED
from rc1.scoring.calibration import CalibrationReport, Reply, Resampling, calibrate, success_of
from rc1.scoring.judge import JUDGE_COMPONENT
from rc1.scoring.pipeline import components_for
from rc1.scoring.weights import load_weights
from rc1.views.archive import Shard, ShardChanged, archive_shards, read_shard

STEP = 0


class Calibrated(msgspec.Struct, frozen=True, kw_only=True):
    """A run's calibration, for the command to write and show."""

    report: CalibrationReport
    path: Path  # reports/<run>/calibration_report_<ts>.json
    root: Path  # the workspace's root, which the path is shown relative to


def calibrate_run(loaded: LoadedConfig, seed: int | None = None) -> Calibrated:
    """The calibration of the line of training of `seed` (default: the first) of the run `loaded` names."""
    ws = Workspace.here(loaded.config.run.name)
    if not ws.log_path.exists():
        raise BadInput(f"{ws.log_path}: no event log for run {ws.run!r}")
    events = read_log(ws.log_path).events
    shard = _step0_shard(ws.run, events, seed)
    replies = _replies(ws, shard)
    _check_success(shard, replies, next(e for e in events if e.seq == shard.seq))
    current = load_weights(loaded.weights_path, components_for(loaded))
    resampling = Resampling(seed=shard.seed if shard.seed is not None else loaded.config.run.seed)
    found = calibrate(replies, current, judge=JUDGE_COMPONENT, resampling=resampling)
    stamp = utc_stamp()
    report = CalibrationReport(
        **msgspec.structs.asdict(found),
        run=ws.run,
        seed=shard.seed,
        step=STEP,
        evaluation=shard.path,
        evaluation_sha256=shard.sha256,
        evaluation_seq=shard.seq,
        weights_file=_relative(loaded.weights_path, ws),
        created=stamp,
        resampling=resampling,
    )
    return Calibrated(report=report, path=ws.reports_dir / f"calibration_report_{stamp}.json", root=ws.root)


def _step0_shard(run: str, events: list[ev.Event], seed: int | None) -> Shard:
    """The archive shard of the step-0 evaluation of `seed`'s line (any line's first, without one); refused, with
    what to do, where training has not archived one."""
    shards = [s for s in archive_shards(events) if s.kind == "eval" and s.step == STEP]
    if seed is not None:
        shards = [s for s in shards if s.seed == seed]
    if shards:
        return min(shards, key=lambda s: s.seq)
    evaluated = [e for e in events if isinstance(e, ev.EvalCompleted) and e.step == STEP]
    line = f" of seed {seed}" if seed is not None else ""
    if evaluated:
        raise GateClosed(
            f"run {run}: its step-0 evaluation{line} (seq {evaluated[-1].seq}) archived no replies (an rc1 before the "
            "rollout archive, or a line abandoned since); calibrate reads the replies with their components"
        )
    raise GateClosed(
        f"run {run} has no step-0 evaluation{line} yet: calibrate reads the shadow set's replies to the policy before "
        "training, which training evaluates and archives first (round 2's shadow run keeps no per-reply components). "
        "`rc1 advance` starts training"
    )


def _replies(ws: Workspace, shard: Shard) -> list[Reply]:
    """The shard's greedy and sampled replies, with the success the evaluation counted for each."""
    try:
        rows = [r for r in read_shard(ws.root, shard) if r.kind in (EVAL, EVAL_SAMPLED)]
    except ShardChanged as e:
        raise BadInput(str(e)) from None
    return [Reply(r.item_id, r.kind == EVAL, success_of(r.kind == EVAL, r.components), r.components) for r in rows]


def _check_success(shard: Shard, replies: list[Reply], event: ev.EvalCompleted) -> None:
    """The replies' success, item by item, is what the evaluation recorded (where it recorded it: since monitors)."""
    if not event.item_ids:
        return
    greedy = {r.item_id: r.success for r in replies if r.greedy}
    sampled = dict.fromkeys(event.item_ids, 0.0)
    for r in replies:
        if not r.greedy:
            sampled[r.item_id] = sampled.get(r.item_id, 0.0) + r.success
    recorded = dict(zip(event.item_ids, event.item_greedy, strict=True))
    if greedy != recorded or sampled != dict(zip(event.item_ids, map(float, event.item_sampled), strict=True)):
        raise BadInput(
            f"{shard.path}: its replies' success differs from what eval_completed (seq {event.seq}) recorded item by "
            "item; see `rc1 audit --rescore`"
        )


def _relative(path: Path, ws: Workspace) -> str:
    return str(path.relative_to(ws.root)) if path.is_relative_to(ws.root) else str(path)
