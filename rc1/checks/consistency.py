"""Training-config consistency: the rules a profile must obey before anything trains.

The rules live here, keyed by the profile the config declares; no config key can switch them off. The production
rules are those of a serious run, and they include floors on every check's threshold (each check's entry gives its
own; rc1/app/checks.py collects them as `PRODUCTION_FLOORS`): a production config may make a data check stricter,
never looser. The smoke profile is the production path (model, adapter, judge, monitors, those floors) for a few
hundred steps with small sets: its scale is not held to production's, and its verdict is labelled not a release. The
local profile is the embedded default on a CPU and is held to its own, smaller limits — including an upper bound on
steps, so a long run cannot pass itself off as local; smoke has one too.
"""

from __future__ import annotations

from collections.abc import Callable

from rc1.checks.result import CheckResult
from rc1.checks.spec import Check, Floor
from rc1.config.schema import Config
from rc1.core.catalog import PRODUCTION_MIX, PRODUCTION_PATH_PROFILES
from rc1.core.runbook import Runbook
from rc1.registry.strategies import STRATEGIES

LOCAL_MAX_STEPS = 5000
SMOKE_MAX_STEPS = 2000

PRODUCTION_POOL_SIZE = 30000
PRODUCTION_OVERCLAR_ALPHA, PRODUCTION_OVERCLAR_CAP = 0.07, 3
PRODUCTION_SHADOW_SIZE = 245
PRODUCTION_MIN_HARD_GAIN_PP = 5.0
# A task of yours may set its own distinct-2 floor (templated records vary less than prose), never so low that the
# check cannot fail: a pool of one template with the numbers changed scores about 0.1.
PRODUCTION_TASK_MIN_DISTINCT2 = 0.2

Rule = tuple[str, Callable[[Config], float], Callable[[float], bool], str]


def _mix_deviation(c: Config) -> float:
    return max(abs(c.data.mix.get(task, 0.0) - share) for task, share in PRODUCTION_MIX.items())


_COMMON: list[Rule] = [
    ("simulate", lambda c: float(c.train.simulate), lambda v: v == 0.0, "train.simulate must be false"),
    ("live_mode", lambda c: float(c.train.live_mode), lambda v: v == 1.0, "train.live_mode must be true"),
    (
        "use_overclar_penalty",
        lambda c: float(c.reward.use_overclar_penalty),
        lambda v: v == 1.0,
        "reward.use_overclar_penalty must be true",
    ),
]
# Only where a KL target acts (rc1/registry/strategies/: config refuses one elsewhere): PPO's passes always stop at
# it; GRPO and RLOO adapt β to it, so with β 0 (no KL term, as the local profile's full fine-tuning trains) there
# is nothing for a target to adapt.
_RL: list[Rule] = [
    (
        "target_kl",
        lambda c: c.train.target_kl or 0.0,
        lambda v: 0.02 <= v <= 0.05,
        "train.target_kl must be set, in [0.02, 0.05]",
    ),
]


def _has_kl_target(c: Config) -> bool:
    return STRATEGIES[c.engine.strategy].target_kl_acts(c.train.beta)


def _floor_rule(key: str, floor: Floor) -> Rule:
    # The message is formatted with the measured value (see training_config_check).
    def value(c: Config) -> float:
        node = c
        for part in key.split("."):
            node = getattr(node, part)
        return float(node)

    bound = floor.bound
    if floor.side == "min":
        return (
            key,
            value,
            lambda v: v >= bound,
            f"{key} is {{value:g}}; the production path (profiles production, smoke) may not go below {bound:g}",
        )
    return (
        key,
        value,
        lambda v: v <= bound,
        f"{key} is {{value:g}}; the production path (profiles production, smoke) may not go above {bound:g}",
    )


# The production path as it trains and scores, for a release and for its smoke run alike.
_PRODUCTION_PATH: list[Rule] = _COMMON + [
    # An adapter over the production base: QLoRA (a 4-bit base, configs/rc1.yaml) or LoRA over the bf16 base, the way
    # to vLLM rollouts (TRL cannot sync a 4-bit base to vLLM: rc1/config/rules.py).
    (
        "adapter",
        lambda c: float(c.finetune.method in ("lora", "qlora")),
        lambda v: v == 1.0,
        "finetune.method must be qlora or lora",
    ),
    (
        "overclar_alpha",
        lambda c: c.reward.overclar_alpha,
        lambda v: abs(v - PRODUCTION_OVERCLAR_ALPHA) < 1e-12,
        f"reward.overclar_alpha must be {PRODUCTION_OVERCLAR_ALPHA}",
    ),
    (
        "overclar_cap",
        lambda c: float(c.reward.overclar_cap),
        lambda v: v == PRODUCTION_OVERCLAR_CAP,
        f"reward.overclar_cap must be {PRODUCTION_OVERCLAR_CAP}",
    ),
    (
        "task_min_distinct2",
        lambda c: min((t.min_distinct2 for t in c.data.tasks.values() if t.min_distinct2 is not None), default=1.0),
        lambda v: v >= PRODUCTION_TASK_MIN_DISTINCT2,
        f"data.tasks.<name>.min_distinct2 is {{value:g}}; the production path may not go below "
        f"{PRODUCTION_TASK_MIN_DISTINCT2:g}",
    ),
    (
        "gold_answers",
        lambda c: float(c.reward.answers == "gold"),
        lambda v: v == 1.0,
        "reward.answers must be gold (shuffled answers are a control arm, not a release)",
    ),
]

# A release: the production path at the production scale, against the RC1 gate.
PRODUCTION_RULES: list[Rule] = _PRODUCTION_PATH + [
    (
        "mix_deviation",
        _mix_deviation,
        lambda v: v <= 1e-6,
        "data.mix must be hotpotqa:0.45, strategyqa:0.30, gsm8k:0.25",
    ),
    ("max_steps", lambda c: float(c.train.max_steps), lambda v: v >= 50000, "train.max_steps must be ≥ 50000"),
    (
        "seeds",
        lambda c: float(len(set(c.run.seeds))),
        lambda v: v >= 3,
        "run.seeds must list at least 3 distinct seeds",
    ),
    (
        "pool_size",
        lambda c: float(c.data.pool_size),
        lambda v: v >= PRODUCTION_POOL_SIZE,
        f"data.pool_size must be ≥ {PRODUCTION_POOL_SIZE}",
    ),
    (
        "shadow_size",
        lambda c: float(c.data.shadow_size),
        lambda v: v >= PRODUCTION_SHADOW_SIZE,
        f"data.shadow_size must be ≥ {PRODUCTION_SHADOW_SIZE}",
    ),
    (
        "min_hard_gain_pp",
        lambda c: c.release.min_hard_gain_pp,
        lambda v: v >= PRODUCTION_MIN_HARD_GAIN_PP,
        f"release.min_hard_gain_pp must be ≥ {PRODUCTION_MIN_HARD_GAIN_PP} (the RC1 release gate)",
    ),
]

# A smoke run: the production path (its model, adapter, judge, monitors and every check's production floor) for a few
# hundred steps, a small pool and gate set, one seed; its verdict is computed as a release's and labelled not one.
SMOKE_RULES: list[Rule] = _PRODUCTION_PATH + [
    (
        "max_steps",
        lambda c: float(c.train.max_steps),
        lambda v: v <= SMOKE_MAX_STEPS,
        f"a smoke run has at most {SMOKE_MAX_STEPS} steps; declare `profile: production` for a release",
    ),
    ("seeds", lambda c: float(len(set(c.run.seeds))), lambda v: v >= 1, "run.seeds must list at least one seed"),
]

LOCAL_RULES: list[Rule] = _COMMON + [
    (
        "max_steps",
        lambda c: float(c.train.max_steps),
        lambda v: v <= LOCAL_MAX_STEPS,
        f"a local run has at most {LOCAL_MAX_STEPS} steps; declare `profile: production` for a long run",
    ),
    ("seeds", lambda c: float(len(set(c.run.seeds))), lambda v: v >= 1, "run.seeds must list at least one seed"),
]


def training_config_check(config: Config, floors: dict[str, Floor]) -> CheckResult:
    """The profile's rules; in production also every check's threshold held to its floor (`floors`: the checks
    table's, rc1/app/checks.py `PRODUCTION_FLOORS`)."""
    rules = {"production": PRODUCTION_RULES, "smoke": SMOKE_RULES}.get(config.profile, LOCAL_RULES)
    if config.profile in PRODUCTION_PATH_PROFILES:
        rules = rules + [_floor_rule(key, floor) for key, floor in floors.items()]
    rules = rules + (_RL if _has_kl_target(config) else [])
    measured = {
        "production_profile": float(config.profile == "production"),
        "smoke_profile": float(config.profile == "smoke"),
    }
    failures = []
    for name, measure, ok, message in rules:
        value = measure(config)
        measured[name] = value
        if not ok(value):
            failures.append(message.format(value=value))
    return CheckResult(
        name="training_config",
        passed=not failures,
        measured=measured,
        thresholds={"rules": float(len(rules))},
        detail="; ".join(failures) if failures else f"{config.profile} profile: all {len(rules)} rules hold",
    )


CHECK = Check(
    name="training_config",
    rounds=(1, 2),
    thresholds={"profile": None},
    run=lambda r: training_config_check(r.config, r.floors),
    runbook=Runbook(
        means="the config breaks a rule of its profile; the detail names each key (train.simulate, run.seeds, "
        "train.target_kl, a preflight threshold looser than its production floor, ...)",
        tries=(
            "set each key the detail names to what it asks; rc1 config explain KEY shows its value and its source",
            "a long run declared local (train.max_steps > 5000): declare profile: production, or lower train.max_steps",
            "a preflight threshold past its production floor: put it back (PRODUCTION_FLOORS); production may make "
            "a check stricter, never looser",
            "train.target_kl in [0.02, 0.05] wherever it acts (ppo; grpo or rloo at train.beta > 0)",
        ),
    ),
)
