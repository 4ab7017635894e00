"""`rc1 …`: the parser of every command (rc1/cli/commands/) and the one error boundary that maps exceptions to
exit codes."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from rc1.cli.commands import COMMANDS, command
from rc1.config.kept import DEFAULT_CONFIG
from rc1.core import distributed
from rc1.core.closed_pipe import CLOSED_PIPE_EXIT, guarded_stdout
from rc1.core.cuda_env import fix_cublas_workspace
from rc1.core.errors import ExitCode, Rc1Error, RoundFailed, TrainingError


def build_parser(chosen: str | None = None) -> argparse.ArgumentParser:
    """The whole command line (`rc1 --help` lists every command with its line), or, with `chosen` (the command the
    arguments begin with), that command's parser in full and the others by name only: `rc1 status` imports the
    status module, not the 21 others and what they import (at 1M events, `rc1 status --json` 0.45 s → 0.20 s)."""
    parser = argparse.ArgumentParser(prog="rc1", description="Gated, resumable, auditable RL fine-tuning.")
    parser.add_argument("--version", action=_Version, help="print the code version rc1 records in run_started")
    parser.set_defaults(config=None, overrides=[], run=None, accept_changed_inputs=False)  # commands that read none
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        if chosen is None or name == chosen:
            module = command(name)
            module.arguments(sub.add_parser(name, help=module.HELP))
        else:
            sub.add_parser(name)
    return parser


def _chosen_command(argv: list[str]) -> str | None:
    """The command `argv` begins with, when it begins with one (a top-level flag first, `--help` or `--version`,
    parses against the whole parser)."""
    return argv[0] if argv and argv[0] in COMMANDS else None


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
    fix_cublas_workspace()  # before anything can touch CUDA (train.deterministic: rc1/core/cuda_env.py)
    # bitsandbytes names an optional package of its CPU kernels when it is imported (peft and TRL import it wherever it
    # is installed); rc1 never runs those kernels (QLoRA is CUDA's), so the line is not the user's to read
    logging.getLogger("bitsandbytes.backends.cpu.ops").setLevel(logging.ERROR)
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser(_chosen_command(argv)).parse_args(argv)
    handler = command(args.command).run
    try:
        if args.command not in ("train", "audit"):  # `audit --retrain` runs on the line's processes (audit.py)
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

                print(f"runbook (docs/monitors-and-runbook.md; `rc1 runbook NAME`):\n{text(e.checks)}", file=sys.stderr)
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
