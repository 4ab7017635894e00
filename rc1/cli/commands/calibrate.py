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

if TYPE_CHECKING:  # rc1/app/calibration.py is imported in `run`: scipy is not loaded by every command's parser
    from rc1.scoring.calibration import CalibrationReport, Interval

HELP = "which reward components track success at step 0, with intervals, and the weights that would track it best"
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
    from rc1.app.calibration import calibrate_run

    done = calibrate_run(config_for_reading(args), args.seed)
    write_and_show(done.path, done.root, done.report, "" if args.json else _text(done.report), args.json)
    return 0


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
