"""`rc1 calibrate`: which reward components track success, with intervals, and the weights that would track it best.

It reads the step-0 evaluation's archived replies (the shadow set's greedy and sampled replies to the policy before
training, with their components; verified against the sha256 their eval_completed recorded) and the run's weights
file, and writes reports/<run>/calibration_report_<ts>.json (rc1/scoring/calibration.py says what is in it). It
suggests weights; it never edits a weights file, and it appends nothing to the log. Round 2's shadow run keeps only
its statistics, not its replies' components: calibrate needs the step-0 evaluation, which training starts with.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

import msgspec

from rc1.cli.args import config_args, config_for_reading
from rc1.cli.report_file import write_and_show
from rc1.core.errors import BadInput, GateClosed
from rc1.core.failure import utc_stamp
from rc1.core.workspace import Workspace
from rc1.eventlog.log import read_log
from rc1.run import events as ev
from rc1.scoring.archive import EVAL, EVAL_SAMPLED
from rc1.scoring.judge import JUDGE_COMPONENT
from rc1.scoring.pipeline import components_for
from rc1.scoring.weights import load_weights
from rc1.views.archive import Shard, ShardChanged, archive_shards, read_shard

if TYPE_CHECKING:  # imported in `run`: scipy is not loaded by every command's parser
    from rc1.scoring.calibration import CalibrationReport, Interval, Reply

HELP = "which reward components track success at step 0, with intervals, and the weights that would track it best"
STEP = 0
WIDTH = 27  # an interval's column: "+0.123 [+0.045, +0.201]*" and a gap


def arguments(parser: argparse.ArgumentParser) -> None:
    config_args(parser)
    parser.add_argument(
        "--seed",
        type=int,
        metavar="S",
        help="the line of training of seed S (default: the first)",
    )
    parser.add_argument("--json", action="store_true", help="the report on stdout as JSON (it is written either way)")


def run(args) -> int:
    from rc1.scoring.calibration import CalibrationReport, Reply, Resampling, calibrate, success_of

    loaded = config_for_reading(args)
    ws = Workspace.here(loaded.config.run.name)
    if not ws.log_path.exists():
        raise BadInput(f"{ws.log_path}: no event log for run {ws.run!r}")
    events = read_log(ws.log_path).events
    shard = _step0_shard(ws.run, events, args.seed)
    try:
        rows = [r for r in read_shard(ws.root, shard) if r.kind in (EVAL, EVAL_SAMPLED)]
    except ShardChanged as e:
        raise BadInput(str(e)) from None
    replies = [Reply(r.item_id, r.kind == EVAL, success_of(r.kind == EVAL, r.components), r.components) for r in rows]
    _check_success(shard, replies, next(e for e in events if e.seq == shard.seq))
    current = load_weights(loaded.weights_path, components_for(loaded))
    resampling = Resampling(seed=shard.seed if shard.seed is not None else loaded.config.run.seed)
    found = calibrate(replies, current, judge=JUDGE_COMPONENT, resampling=resampling)
    stamp = utc_stamp()
    path = ws.reports_dir / f"calibration_report_{stamp}.json"
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
    write_and_show(path, ws.root, report, "" if args.json else _text(report), args.json)
    return 0


def _step0_shard(run: str, events: list[ev.Event], seed: int | None) -> Shard:
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


def _relative(path, ws: Workspace) -> str:
    return str(path.relative_to(ws.root)) if path.is_relative_to(ws.root) else str(path)


def _interval(i: Interval | None) -> str:
    if i is None:
        return f"{'-':<{WIDTH}}"
    if i.value is None:
        return f"{'undefined':<{WIDTH}}"
    around = f"[{i.low:+.3f}, {i.high:+.3f}]" if i.low is not None else "[no interval]"
    return f"{i.value:+.3f} {around}{'*' if i.undefined_share else ' '}".ljust(WIDTH)


def _weight(w: float | None) -> str:
    return f"{w:>9.3f}" if w is not None else f"{'-':>9}"


def _text(r: CalibrationReport) -> str:
    lines = [
        f"calibration of run {r.run}, step-0 evaluation ({r.evaluation}): {r.n_items} items, {r.n_replies} replies, "
        f"{r.n_successes:g} succeeded ({r.items_succeeding} items)",
        f"correlation over the replies, {r.resampling.confidence:.0%} interval from {r.resampling.resamples} "
        f"resamples of the items (each with all its replies); weights from {r.weights_file}",
        "",
        f"{'component':<14}{'n':>6}  {'with success':<{WIDTH}}{'with the judge':<{WIDTH}}"
        f"{'weight':>9}{'suggested':>10}",
    ]
    for c in r.components:
        lines.append(
            f"{c.name:<14}{c.with_success.n_replies:>6}  {_interval(c.with_success)}{_interval(c.with_judge)}"
            f"{_weight(c.current_weight)}{_weight(c.suggested_weight):>10}" + (f"  ({c.note})" if c.note else "")
        )
    h = r.held_out
    lines += [
        "",
        f"held out ({len(h.held_out_items)} items, {h.held_out_items_succeeding} with a success; the weights were "
        f"fitted on the other {len(h.fit_items)}, {h.fit_items_succeeding} with a success; {r.fitted_on}):",
    ]
    for label, interval in (
        ("current weights", h.current),
        ("suggested", h.suggested),
        ("suggested - current", h.difference),
    ):
        share = interval.undefined_share if interval is not None else 0.0
        undefined = f"(* undefined in {share:.0%} of the resamples)" if share else ""
        lines.append(f"  {label:<22}{_interval(interval)}{undefined}".rstrip())
    if r.suggested_weights is not None:
        lines += ["", "suggested (not written anywhere; a weights file of a new run may take them):"]
        lines.append("  " + msgspec.json.encode(r.suggested_weights).decode())
    lines += ["", *(f"note: {note}" for note in r.notes)]
    return "\n".join(lines)
