"""The config a command works with: the run's own (rc1/config/kept.py), from the command's --config, --set,
--run and --accept-changed-inputs."""

from __future__ import annotations

from rc1.config.kept import load_run_config
from rc1.config.loading import LoadedConfig


def config_of(args) -> LoadedConfig:
    return load_run_config(args.config, args.overrides, args.run, args.accept_changed_inputs)
