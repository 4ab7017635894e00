"""The embedded default recorded: configs/local.yaml as it ran until issue 50 made it live.

`make run` trains live episodes on the built-in reader (configs/local.yaml). These changes to it give the recorded
default beside it: the built-in tiny model, every tool step written into the prompt, 24-token replies, the learning
rate, length and gate it was measured at (README's earlier figures, docs/release-verdict.md). The suite's short runs
and the benches whose figures were measured on it (training speed, monitors' false trips, processes, the reward's
control arms, gpu-check's gated run) run it, so their baselines stay what they were measured on; a user runs it with
`make run-recorded` (`bin/rc1 advance --all --set run.name=recorded $(.venv/bin/python -m rc1.config.recorded)`).
"""

from __future__ import annotations

import sys

RECORDED: dict[str, object] = {
    "model.name": "builtin:tiny-qwen3",
    "model.warm_start_steps": 60,
    "data.episodes": "recorded",
    "data.pages": "titles",
    "train.max_steps": 120,
    "train.per_device_batch_size": 64,
    "train.learning_rate": 1.5e-3,
    "train.max_completion_tokens": 24,
    "release.gate_size": 200,
    "release.samples": 8,
    "release.min_hard_gain_pp": 5.0,
}


def recorded_overrides() -> list[str]:
    """RECORDED as `key=value` overrides (what `load_config` and each `--set` take)."""
    return [f"{key}={value}" for key, value in RECORDED.items()]


def recorded_sets() -> list[str]:
    """RECORDED as `--set key=value` arguments of an rc1 command."""
    return [arg for override in recorded_overrides() for arg in ("--set", override)]


def recorded_raw(raw: dict) -> dict:
    """A parsed configs/local.yaml with RECORDED written into it, in place (for a config file written from it)."""
    from rc1.config.loading import apply_override

    for override in recorded_overrides():
        apply_override(raw, override)
    return raw


if __name__ == "__main__":  # the Makefile's `make run-recorded`
    import argparse

    argparse.ArgumentParser(
        prog="python -m rc1.config.recorded", description="print the --set flags of the recorded embedded default"
    ).parse_args()
    sys.stdout.write(" ".join(recorded_sets()) + "\n")
