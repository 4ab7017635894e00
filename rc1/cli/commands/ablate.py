"""`rc1 ablate [--component NAME] [--json]`: does each reward component earn its weight? The run's own config is
trained again once per component with that component's weight moved to the others (rc1/scoring/ablation.py), each
arm a run of its own (`<run>-without-<component>`, gated like any run, started with `rc1 advance --all` in a process
of its own, and resumed where a previous ablation left it), and every arm's selected checkpoint is compared with the
full reward's on the same gate items, paired, with its interval. It writes reports/<run>/ablation_<ts>.json and
appends nothing to the run's own log. It needs the run complete (its release verdict is the full reward's side).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from rc1.cli.args import config_args, config_for_reading
from rc1.cli.report_file import write_and_show
from rc1.core.errors import ExitCode

if TYPE_CHECKING:  # rc1/app/ablation.py is imported in `run`: building every command's parser leaves it out
    from rc1.scoring.ablation import AblationReport

HELP = "train the run again once per reward component without it, and compare each arm with the full reward"


def arguments(parser: argparse.ArgumentParser) -> None:
    config_args(parser)
    parser.add_argument("--component", metavar="NAME", help="one arm only: this component (default: every one)")
    parser.add_argument("--json", action="store_true", help="the report on stdout as JSON (it is written either way)")


def run(args: argparse.Namespace) -> int:
    from rc1.app.ablation import ablate

    done = ablate(config_for_reading(args), args.component, report_on_stdout=args.json)
    write_and_show(done.path, done.root, done.report, render(done.report), args.json)
    if done.failed:
        print(f"error: ablation: {'; '.join(done.failed)}; the report holds the other arms", file=sys.stderr)
        return int(ExitCode.RUNTIME_FAILURE)
    return 0


def render(report: AblationReport) -> str:
    lines = [
        f"ablation of run {report.run}: gate set n={report.n} × {report.samples} samples "
        f"(sha256 {report.gate_sha256[:12]})",
        f"full reward  gain {report.full_gain_pp:+.1f} pp [{report.full_ci_pp[0]:+.1f}, {report.full_ci_pp[1]:+.1f}] "
        f"{'PASSED' if report.full_passed else 'NOT PASSED'}  weights {report.full_weights}",
        "",
        "without      arm's own verdict (vs its step 0)      arm − full on the same items (selected checkpoints)",
    ]
    for arm in report.arms:
        diff = arm.against_full
        own = f"{arm.verdict_gain_pp:+.1f} pp [{arm.verdict_ci_pp[0]:+.1f}, {arm.verdict_ci_pp[1]:+.1f}]"
        lines.append(
            f"{arm.component:<12} {own:<24} {'PASSED' if arm.verdict_passed else 'not passed':<12}  "
            f"{diff.gain_pp:+.1f} pp [{diff.ci_low_pp:+.1f}, {diff.ci_high_pp:+.1f}]  ({arm.run}, step {arm.step}"
            + (f"; halted by {arm.halted}, stopped)" if arm.halted else ")")
        )
    for component, why in report.skipped.items():
        lines.append(f"{component:<12} no arm: {why}")
    lines.append(
        "an interval of arm − full below 0: the component earned its weight on this run; across 0: this run cannot tell"
    )
    return "\n".join(lines)
