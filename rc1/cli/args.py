"""The arguments every command that works on a run shares (--config, --set, --run, --accept-changed-inputs), and the
config they name: the run's own (rc1/config/kept.py)."""

from __future__ import annotations

import argparse
import difflib
import sys

from rc1.config.kept import DEFAULT_CONFIG, load_run_config, read_run_config
from rc1.config.loading import LoadedConfig
from rc1.core.errors import BadInput
from rc1.core.workspace import Workspace


def config_args(parser: argparse.ArgumentParser) -> None:
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


def config_of(args: argparse.Namespace) -> LoadedConfig:
    """The config of a command that may write to the run: another config than the run kept is refused."""
    return load_run_config(args.config, args.overrides, args.run, args.accept_changed_inputs)


def config_for_reading(args: argparse.Namespace, *, run_must_exist: bool = True) -> LoadedConfig:
    """The config of a command that only reads a run: the run's own, whatever `--config`/`--set` ask (what they
    would change is noted on stderr, not refused). A run named on the command line (`--run`, `--set run.name=`)
    that the workspace has no log of is a typo until shown otherwise: exit 2, naming the runs it has."""
    loaded, would_be = read_run_config(args.config, args.overrides, args.run)
    if run_must_exist:
        require_run(args, loaded.config.run.name)
    if would_be:
        print(would_be_note(loaded, would_be), file=sys.stderr)
    return loaded


def would_be_note(loaded: LoadedConfig, would_be: list[tuple[str, object, object]]) -> str:
    run = loaded.config.run.name
    listed = "; ".join(f"{key} is {old}, would be {new}" for key, old, new in would_be)
    return (
        f"note: run {run} keeps the config of its round 1, and this command only reads it: {listed}. Nothing is "
        f"changed; to train with that, start a new run (--run NAME) or add --accept-changed-inputs to `rc1 advance`"
    )


def require_run(args: argparse.Namespace, run: str, new_allowed: bool = False) -> None:
    """Exit 2 where the command names a run the workspace has no log of, unless `new_allowed` and the workspace has
    no run of a similar name (a command about a config may ask about a run not started yet, not about a typo)."""
    named = args.run is not None or any(item.startswith("run.name=") for item in args.overrides)
    ws = Workspace.here(run)
    if not named or ws.log_path.exists():
        return
    runs = ws.runs()
    if new_allowed and not difflib.get_close_matches(run, runs, n=1, cutoff=0.6):
        return
    if not runs:
        raise BadInput(
            f"{ws.log_path}: no run {run!r} in this workspace ({ws.root}): it has no runs yet. `rc1 advance --run "
            f"{run}` starts one"
        )
    close = difflib.get_close_matches(run, runs, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]}? " if close else ""
    raise BadInput(
        f"{ws.log_path}: no run {run!r} in this workspace; {hint}its runs: {', '.join(runs)}. `rc1 advance --run "
        f"{run}` starts a new one"
    )
