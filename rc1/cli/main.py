"""`rc1 …`: argument parsing and the one error boundary that maps exceptions to exit codes."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rc1.config.kept import DEFAULT_CONFIG
from rc1.core import distributed
from rc1.core.catalog import DIFFICULTIES
from rc1.core.closed_pipe import CLOSED_PIPE_EXIT, guarded_stdout
from rc1.core.errors import ExitCode, Rc1Error, RoundFailed, TrainingError
from rc1.views.handoff import STAGES as HANDOFF_STAGES


def _config_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config",
        help=f"run config (default {DEFAULT_CONFIG}; a run past round 1 uses the config it "
        "kept, and a --config that differs from it is refused)",
    )
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config value by dotted key, e.g. --set train.max_steps=20 (repeatable)",
    )
    parser.add_argument("--run", metavar="NAME", help="the run to work on (the same as --set run.name=NAME)")
    parser.add_argument(
        "--accept-changed-inputs",
        action="store_true",
        help="go on with a config or gated input that differs from what the run's gates passed on: "
        "appends gate_invalidated, and both preflight rounds run again",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rc1", description="Gated, resumable, auditable RL fine-tuning.")
    parser.add_argument("--version", action=_Version, help="print the code version rc1 records in run_started")
    parser.set_defaults(config=None, overrides=[], run=None, accept_changed_inputs=False)  # commands that read none
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("advance", help="do the next stage the state machine allows")
    _config_args(p)
    group = p.add_mutually_exclusive_group()
    group.add_argument("--until", metavar="STATE", help="repeat until the run reaches STATE")
    group.add_argument("--all", action="store_true", help="repeat until the run is complete")
    halt = p.add_argument_group("a halted run's way forward (recorded as halt_acknowledged)")
    halt.add_argument(
        "--because",
        metavar="TEXT",
        help="why: required to go on past a halt; alone, training goes on "
        "from the newest checkpoint with the rule quiet until it clears",
    )
    halt.add_argument(
        "--from",
        dest="rollback_to",
        metavar="best|latest|step_N|start",
        help="roll back to this checkpoint of the halted line (start: begin the line again); --set may "
        "amend train.learning_rate, train.beta, train.temperature, train.max_grad_norm, "
        "train.target_kl",
    )
    halt.add_argument(
        "--stop",
        action="store_true",
        help="end the halted line here; its release verdict runs on the checkpoint the shadow set chose",
    )

    p = sub.add_parser("status", help="state, allowed actions, progress, gates, last error")
    _config_args(p)
    p.add_argument("--json", action="store_true")
    p.add_argument("--diagram", action="store_true", help="print the state machine as Mermaid")

    p = sub.add_parser("handoff", help="the SYNC bundle of a stage: artifacts, checks, risks, blockers, next actions")
    _config_args(p)
    p.add_argument("--round", choices=HANDOFF_STAGES, help="the stage (default: the one the log last worked on)")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("replay", help="the run as it stood at a point of its log")
    _config_args(p)
    p.add_argument("--until", required=True, help="step_N | seq:N | <event type> | <ISO time>")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("audit", help="verify chain, transitions, steps, checkpoints and gate inputs")
    _config_args(p)
    p.add_argument("--json", action="store_true")
    p.add_argument(
        "--rescore",
        action="store_true",
        help="also derive the rewards again from the rollout archive and the release verdicts from the "
        "gate-set evaluations; every mismatch is a finding",
    )
    p.add_argument(
        "--sample",
        type=int,
        metavar="N",
        help="--rescore: completions to score again (default: all of a run of up to 5,000, else 1,000 drawn at random)",
    )
    p.add_argument(
        "--rejudge",
        action="store_true",
        help="--rescore: ask the judge again about each judged completion (paid calls, in the ledger)",
    )
    p.add_argument(
        "--seed",
        dest="sample_seed",
        type=int,
        default=0,
        metavar="S",
        help="--rescore: the seed of that draw (default 0)",
    )

    p = sub.add_parser(
        "rollouts", help="archived completions with each reward component (training's, or an evaluation's)"
    )
    _config_args(p)
    which = p.add_mutually_exclusive_group()
    which.add_argument("--step", type=int, metavar="N", help="training step N's completions")
    which.add_argument("--eval", type=int, metavar="STEP", help="the evaluation at STEP (greedy and sampled replies)")
    p.add_argument("--task", metavar="TASK", help="one task's completions (a built-in task or one of data.tasks)")
    p.add_argument("--seed", type=int, metavar="S", help="the line of training of seed S (default: every line)")
    order = p.add_mutually_exclusive_group()
    order.add_argument("--worst", type=int, metavar="K", help="the K lowest rewards")
    order.add_argument("--best", type=int, metavar="K", help="the K highest rewards")
    p.add_argument(
        "--json",
        action="store_true",
        help="a list of objects (step, item_id, task, completion, components, reward, …) on stdout",
    )

    p = sub.add_parser("repair", help="quarantine a torn tail and append log_repaired")
    _config_args(p)

    p = sub.add_parser("report", help="rebuild the report and log views from the event log")
    _config_args(p)

    p = sub.add_parser("failpack", help="pack logs, reports, configs and the event log into one archive")
    _config_args(p)
    p.add_argument("--out", help="archive path (default reports/failpack_<ts>.tar.gz)")

    p = sub.add_parser("preflight", help="run one preflight round")
    _config_args(p)
    p.add_argument("--round", type=int, choices=(1, 2), required=True)

    p = sub.add_parser("pool", help="build or validate the seed pool alone")
    _config_args(p)
    p.add_argument("action", choices=("build", "validate"))

    p = sub.add_parser("difficulty", help="difficulty metrics, balanced pool, validation and report")
    _config_args(p)
    p.add_argument("action", choices=("metrics", "bucketize", "validate"))

    p = sub.add_parser(
        "shadow",
        help="materialize the held-out sets (the shadow eval set and the release gate set), "
        "or run a policy on the shadow set (shadow run)",
    )
    _config_args(p)
    p.add_argument("action", choices=("materialize", "run"))
    p.add_argument("--tag", default="manual", help="run: names reports/shadow_run_<tag>.json (default manual)")
    p.add_argument("--checkpoint", default="base", help="run: base | best | step_N (default base)")
    p.add_argument("--samples", type=int, help="run: sampled replies per item (default shadow.samples)")

    p = sub.add_parser("scorer", help="probe the scorer: rule self-check, judge key and provider, real judge calls")
    _config_args(p)
    p.add_argument("action", choices=("probe",))
    p.add_argument("--n", type=int, default=8, help="shadow items to send to the judge (default 8)")
    p.add_argument("--live", action="store_true", help="fail unless a live API judge is configured")

    p = sub.add_parser("score", help="one completion's components, penalty, difficulty factor and reward")
    _config_args(p)
    p.add_argument("--task", metavar="TASK", help="the item's task: a built-in one or one of data.tasks")
    p.add_argument("--gold", help="the gold answer")
    p.add_argument("--difficulty", choices=DIFFICULTIES, default="medium")
    p.add_argument("--needs-clarification", action="store_true", help="the item is under-specified")
    p.add_argument("--item-json", metavar="F", help="a whole task item (JSON) instead of --task/--gold/...")
    p.add_argument("--completion-file", metavar="F", required=True, help="the completion, as the policy wrote it")
    p.add_argument(
        "--completion-tokens",
        type=int,
        metavar="N",
        help="its length in tokens (default: counted with the policy's tokenizer)",
    )
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("config", help="explain the config's keys, or print its JSON schema (read-only)")
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    q = actions.add_parser(
        "explain",
        help="every key (or KEY and what is under it): type, effective value, where it "
        "came from (file, --set, default) and what it does",
    )
    _config_args(q)
    q.add_argument("key", nargs="?", metavar="KEY", help="a dotted key or section, e.g. train.learning_rate or release")
    q.add_argument("--json", action="store_true")
    actions.add_parser("schema", help="the config's JSON schema, every description included, on stdout")

    p = sub.add_parser(
        "export",
        help="write a checkpoint out as a model (PEFT adapter, merged or full HF model) with "
        "a model card from the log; appends model_exported",
    )
    _config_args(p)
    p.add_argument(
        "--checkpoint",
        default="best",
        metavar="best|latest|step_N",
        help="best (default: the line's last best/ promotion), latest, or step_N",
    )
    p.add_argument("--seed", type=int, metavar="S", help="the line of training (required when run.seeds has several)")
    p.add_argument(
        "--merge",
        action="store_true",
        help="merge the LoRA adapter into the base: a whole HF model directory (QLoRA: base loaded in bf16)",
    )
    p.add_argument("--out", required=True, metavar="DIR", help="the export directory: new, or empty")
    p.add_argument(
        "--push-to-hub",
        metavar="REPO",
        help="then upload DIR to this hub model repo (huggingface_hub, HF_TOKEN or the stored login)",
    )

    p = sub.add_parser("runbook", help="what a failed check or a tripped monitor usually means and what to try")
    p.add_argument(
        "name", nargs="?", metavar="NAME", help="a check (e.g. difficulty) or a monitor (e.g. entropy_floor)"
    )
    p.add_argument("--markdown", action="store_true", help="every entry as the README's tables")

    p = sub.add_parser("ls", help="the extension points' tables: checks, strategies, monitors, trackers")
    p.add_argument("table", nargs="?", choices=["checks", "strategies", "monitors", "trackers"])
    form = p.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="the rows as JSON: name, about, details")
    form.add_argument("--markdown", action="store_true", help="as docs/tables.md shows it (no table: every table)")

    p = sub.add_parser("train", help="start or resume training (requires round 2)")
    _config_args(p)
    p.add_argument(
        "--resume", metavar="PATH", help="checkpoint dir to resume from (must have a checkpoint_saved event)"
    )
    p.add_argument(
        "--all",
        action="store_true",
        help="train every unfinished line of run.seeds in turn, then the verdict across seeds (what one "
        "multi-process launch runs: accelerate launch ... -m rc1 train --all)",
    )
    p.add_argument(
        "--rank-wait",
        metavar="MINUTES",
        type=float,
        default=distributed.RANK_WAIT_MINUTES,
        help="under a multi-process launch, how long a rank waits at a collective for the others (rank 0 "
        "scoring a step with the judge, publishing a checkpoint, deciding a verdict) before the "
        "launch fails (the process group's timeout, NCCL's or gloo's; default %(default)s)",
    )
    return parser


class _Version(argparse.Action):
    """`rc1 --version`: the code version a run_started event records (package version, commit, +dirty)."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        from rc1.core.provenance import code_version

        print(f"rc1 {code_version()}")
        parser.exit(0)


def main(argv: list[str] | None = None) -> int:
    with guarded_stdout() as stdout:
        code = _main(argv)
    return CLOSED_PIPE_EXIT if stdout.reader_gone and code == 0 else code


def _main(argv: list[str] | None) -> int:
    args = build_parser().parse_args(argv)
    from rc1.cli import handlers as commands

    handler = commands.handler(args.command)
    try:
        if args.command != "train":
            distributed.require_single_process(args.command)
        return int(handler(args))
    except TrainingError as e:
        # The train stage already wrote reports/ERROR_<ts>.json and appended training_failed.
        print(f"FATAL: {e}{_packed(args)}", file=sys.stderr)
        return int(ExitCode.RUNTIME_FAILURE)
    except Rc1Error as e:
        if e.exit_code != ExitCode.RUNTIME_FAILURE:
            print(f"error: {e}", file=sys.stderr)
            if isinstance(e, RoundFailed):
                from rc1.app.runbook import text

                print(f'runbook (README "Runbook"; `rc1 runbook NAME`):\n{text(e.checks)}', file=sys.stderr)
            return int(e.exit_code)
        print(f"FATAL: {e}{_report(e, args)}{_packed(args)}", file=sys.stderr)
        return int(e.exit_code)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # the boundary: anything unforeseen is a runtime failure with a report
        print(f"FATAL: {type(e).__name__}: {e}{_report(e, args)}{_packed(args)}", file=sys.stderr)
        return int(ExitCode.RUNTIME_FAILURE)


def _report(error: BaseException, args) -> str:
    """Write ERROR_<ts>.json in the run's reports and say where; under a multi-process launch only the writing
    rank does (the others' errors reach the user through their own stderr)."""
    if not distributed.is_writer():
        return ""
    from rc1.core.failure import write_error_report

    return _details(write_error_report(error, _workspace(args)))


def _workspace(args):
    """The run's workspace, when the command's config names one (a FATAL error comes after the config loaded);
    None: the default run's folders."""
    from rc1.config.kept import load_run_config
    from rc1.core.workspace import Workspace

    try:
        return Workspace.here(load_run_config(args.config, args.overrides, args.run, True).config.run.name)
    except (Rc1Error, OSError):  # no config, or not a valid one: the error being reported is what matters
        return None


def _details(report) -> str:
    return f" (details in {report})" if report else " (no error report: it could not be written)"


def _packed(args) -> str:
    """Write the failpack a FATAL error leaves (reports/FAIL_<ts>.tar.gz) and say where it is (the writing rank
    only: one pack per failure)."""
    if not distributed.is_writer():
        return ""
    from rc1.core.failure import write_fatal_failpack

    config = args.config or DEFAULT_CONFIG
    path = write_fatal_failpack(_workspace(args), config_path=Path(config))
    return f"; everything packed in {path}" if path else "; the failpack could not be written"
