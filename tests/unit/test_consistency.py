"""Training-config consistency: production rules cannot be switched off; local has its own limits."""

import pytest
from conftest import REPO

from rc1.app.checks import PRODUCTION_FLOORS
from rc1.checks.consistency import LOCAL_MAX_STEPS, SMOKE_MAX_STEPS, training_config_check
from rc1.config.loading import load_config

CONFIGS = REPO / "configs"


def check(name, *overrides):
    return training_config_check(load_config(CONFIGS / name, list(overrides)).config, PRODUCTION_FLOORS)


def test_the_shipped_profiles_pass():
    assert check("rc1.yaml").passed and check("local.yaml").passed and check("rc1-smoke.yaml").passed


@pytest.mark.parametrize(
    "override, message",
    [
        ("train.max_steps=10000", "train.max_steps must be ≥ 50000"),
        ("train.simulate=true", "train.simulate must be false"),
        ("train.live_mode=false", "train.live_mode must be true"),
        ("train.target_kl=0.1", "train.target_kl must be set, in [0.02, 0.05]"),
        ("train.target_kl=null", "train.target_kl must be set, in [0.02, 0.05]"),
        ("run.seeds=[1,2]", "run.seeds must list at least 3 distinct seeds"),
        ("finetune.method=full", "finetune.method must be qlora or lora"),
        ("reward.use_overclar_penalty=false", "reward.use_overclar_penalty must be true"),
    ],
)
def test_each_production_rule_can_fail(override, message):
    result = check("rc1.yaml", override)
    assert not result.passed and message in result.detail


def test_production_mix_is_fixed():
    result = check("rc1.yaml", "data.mix.hotpotqa=0.40", "data.mix.strategyqa=0.35")
    assert not result.passed and result.measured["mix_deviation"] == pytest.approx(0.05)


def test_a_long_run_cannot_pass_itself_off_as_local():
    result = check("local.yaml", f"train.max_steps={LOCAL_MAX_STEPS + 1}", "train.save_steps=10")
    assert not result.passed and "declare `profile: production`" in result.detail


def _loosened(side, bound):
    """A value one step on the loose side of a floor, still a valid config value."""
    if side == "min":
        return bound // 2 if isinstance(bound, int) else bound / 2
    return bound * 2 if isinstance(bound, int) else (bound + 1) / 2  # probabilities stay ≤ 1


@pytest.mark.parametrize("key", sorted(PRODUCTION_FLOORS))
def test_production_cannot_loosen_any_preflight_threshold(key):
    side, bound = PRODUCTION_FLOORS[key].side, PRODUCTION_FLOORS[key].bound
    value = _loosened(side, bound)
    result = check("rc1.yaml", f"{key}={value}")
    word = "below" if side == "min" else "above"
    assert (
        not result.passed
        and f"{key} is {value:g}; the production path (profiles production, smoke) may not go {word} {bound:g}"
        in result.detail
    )


@pytest.mark.parametrize(
    "override, message",
    [
        ("data.pool_size=600", "data.pool_size must be ≥ 30000"),
        ("data.shadow_size=60", "data.shadow_size must be ≥ 245"),
        ("reward.overclar_alpha=0.01", "reward.overclar_alpha must be 0.07"),
        ("reward.overclar_cap=10", "reward.overclar_cap must be 3"),
    ],
)
def test_production_pins_its_data_sizes_and_the_penalty(override, message):
    result = check("rc1.yaml", override)
    assert not result.passed and message in result.detail


def test_production_may_tighten_a_preflight_threshold():
    result = check("rc1.yaml", "preflight.min_distinct2=0.7", "preflight.leak_similarity=0.8", "preflight.leak_ngram=4")
    assert result.passed and result.measured["preflight.min_distinct2"] == 0.7


def test_every_preflight_threshold_has_a_production_floor():
    from rc1.config.schema import PreflightConfig

    unguarded = {f"preflight.{key}" for key in PreflightConfig.__struct_fields__} - set(PRODUCTION_FLOORS)
    assert unguarded == {"preflight.min_accelerator_memory_gb"}  # hardware, not data quality: set per machine


def test_the_local_profile_keeps_its_own_smaller_limits():
    assert check("local.yaml", "preflight.min_len_tokens=16", "preflight.min_free_disk_gb=1").passed


# --- the smoke profile: the production path at a smoke run's scale --------------------------------------------------

SCALE = {
    "profile",
    "run.name",
    "run.seeds",
    "data.pool_size",
    "data.shadow_size",
    "train.max_steps",
    "train.save_steps",
    "train.eval_steps",
    "train.warmup_steps",
    "priority_sampling.seed_ratio_schedule",
    "release.gate_size",
    "monitors.budget.line.accelerator_hours",
}


def _dotted(node, prefix=""):
    if isinstance(node, dict):
        return {k: v for key, value in node.items() for k, v in _dotted(value, f"{prefix}{key}.").items()}
    return {prefix[:-1]: node}


def test_the_smoke_profile_differs_from_production_in_its_scale_alone():
    import msgspec

    smoke = _dotted(msgspec.to_builtins(load_config(CONFIGS / "rc1-smoke.yaml").config))
    production = _dotted(msgspec.to_builtins(load_config(CONFIGS / "rc1.yaml").config))
    differ = {key for key in smoke.keys() | production.keys() if smoke.get(key) != production.get(key)}
    assert differ == SCALE


@pytest.mark.parametrize(
    "override, message",
    [
        (f"train.max_steps={SMOKE_MAX_STEPS + 1}", "a smoke run has at most 2000 steps"),
        ("finetune.method=full", "finetune.method must be qlora or lora"),
        ("train.simulate=true", "train.simulate must be false"),
        ("preflight.min_distinct2=0.3", "the production path (profiles production, smoke) may not go below 0.6"),
        ("preflight.max_no_signal_share=0.95", "may not go above 0.85"),
    ],
)
def test_the_smoke_profile_keeps_the_production_paths_rules_and_floors(override, message):
    result = check("rc1-smoke.yaml", override)
    assert not result.passed and message in result.detail


def test_the_smoke_profile_is_not_held_to_productions_scale():
    shares = ["data.mix.hotpotqa=0.6", "data.mix.strategyqa=0.15"]
    result = check("rc1-smoke.yaml", "data.pool_size=600", *shares, "release.min_hard_gain_pp=20")
    assert result.passed and result.measured["smoke_profile"] == 1.0


def test_a_smoke_run_needs_the_live_judge_production_needs():
    from rc1.checks.scorer import scorer_live

    offline = ["scorer.provider=none", "scorer.model=", "scorer.cache=false"]
    result = scorer_live(load_config(CONFIGS / "rc1-smoke.yaml", offline).config)
    assert not result.passed and "the smoke profile needs a live API judge" in result.detail
