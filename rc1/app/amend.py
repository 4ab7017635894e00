"""The training keys a rollback from a halt may change, and the config a line trains with once they are changed.

A halt's rollback may amend the few keys that steer the optimizer and the sampler, nothing that was gated (data,
model, reward, scorer, evaluation): the amended config is the run's kept config with `training_amended`'s values on
top, checked by config's own rules and round 2's `training_config` check before anything is appended. Any other
change goes through the gates again (`--accept-changed-inputs`). Evaluations keep the gated config: the shadow and gate
sets are sampled at the temperature round 2 measured the step-0 policy at, so every verdict stays paired.
"""

from __future__ import annotations

import msgspec

from rc1.app.checks import PRODUCTION_FLOORS
from rc1.checks.consistency import training_config_check
from rc1.config.loading import LoadedConfig, parse_scalar
from rc1.config.rules import cross_field_problems
from rc1.core.errors import BadInput, GateClosed
from rc1.run import events as ev

# Dotted key -> what it steers. Learning rate and β replace what a resumed checkpoint holds (its optimizer's rate, its
# adapted β); the others are read from the config at every step.
AMENDABLE = {
    "train.learning_rate": "the optimizer's peak learning rate (the schedule goes on from the checkpoint's step)",
    "train.beta": "β, the KL coefficient (TRL builds no reference at β 0: a rollback cannot switch it on from 0)",
    "train.temperature": "the training rollouts' sampling temperature (evaluations keep the gated one)",
    "train.max_grad_norm": "gradient clipping: the largest global norm of a step's gradient",
    "train.target_kl": "the KL target β adapts to (grpo, rloo at β > 0) or PPO stops its passes at",
}


def split_overrides(overrides: list[str]) -> tuple[list[str], dict[str, object]]:
    """(the overrides that are not amendable, the amendable ones as dotted key -> value)."""
    rest, amended = [], {}
    for item in overrides:
        key, _, value = item.partition("=")
        if key in AMENDABLE:
            amended[key] = parse_scalar(value)
        else:
            rest.append(item)
    return rest, amended


def amended(loaded: LoadedConfig, values: dict[str, object]) -> LoadedConfig:
    """The config with amended training keys; the fingerprint stays the kept config's (the gates vouch for that one,
    and `training_amended` records the difference)."""
    if not values:
        return loaded
    train = loaded.config.train
    changes = {key.removeprefix("train."): value for key, value in values.items()}
    try:
        new_train = msgspec.convert({**msgspec.to_builtins(train), **changes}, type(train), strict=True)
    except msgspec.ValidationError as e:
        raise BadInput(f"--set: {e} (amending {', '.join(values)})") from None
    config = msgspec.structs.replace(loaded.config, train=new_train)
    problems = cross_field_problems(config)
    if problems:
        raise BadInput("\n".join(f"--set: {p}" for p in problems))
    return msgspec.structs.replace(loaded, config=config)


def changes_of(loaded: LoadedConfig, values: dict[str, object]) -> dict[str, ev.Amended]:
    """The amendment as training_amended records it: each key whose value changes, old and new."""
    new = amended(loaded, values).config.train
    old = loaded.config.train
    diff = {}
    for key in values:
        field = key.removeprefix("train.")
        if getattr(old, field) != getattr(new, field):
            diff[key] = ev.Amended(old=getattr(old, field), new=getattr(new, field))
    return diff


def check_amended(loaded: LoadedConfig) -> None:
    """Round 2's config check on the amended config; refused (exit 3, nothing appended) where it fails."""
    result = training_config_check(loaded.config, PRODUCTION_FLOORS)
    if not result.passed:
        raise GateClosed(
            f"the amended config fails round 2's training_config check: {result.detail}; nothing was appended"
        )


def apply_amendments(loaded: LoadedConfig, amendments: dict[str, float | None]) -> LoadedConfig:
    """The config a line trains with: the kept config with every amendment the log records."""
    return amended(loaded, dict(amendments))
