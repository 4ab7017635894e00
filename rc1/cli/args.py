"""The arguments every command that works on a run shares (--config, --set, --run, --accept-changed-inputs), and the
config they name: the run's own (rc1/config/kept.py)."""

from __future__ import annotations

import argparse

from rc1.config.kept import DEFAULT_CONFIG, load_run_config
from rc1.config.loading import LoadedConfig


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
    return load_run_config(args.config, args.overrides, args.run, args.accept_changed_inputs)
