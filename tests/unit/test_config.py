"""Config: typed, strict, path-qualified errors, overrides, a stable fingerprint."""

import re

import pytest
import yaml
from conftest import REPO

from rc1.config.loading import load_config
from rc1.config.recorded import recorded_overrides
from rc1.core.errors import BadInput
from rc1.registry.strategies import pairs, with_target_kl

CONFIGS = REPO / "configs"
RECORDED = recorded_overrides()  # the embedded default recorded: live episodes are GRPO on TRL only


@pytest.mark.parametrize("name", sorted(p.name for p in CONFIGS.glob("*.yaml")))
def test_every_shipped_config_loads_and_names_its_command(name):
    loaded = load_config(CONFIGS / name)
    assert len(loaded.sha256) == 64
    assert (CONFIGS / name).read_text().startswith("# bin/rc1 ")


def test_the_production_profile_targets_qwen3_4b_thinking_with_lora_on_every_projection():
    c = load_config(CONFIGS / "rc1.yaml").config
    assert c.profile == "production" and c.model.name == "Qwen/Qwen3-4B-Thinking-2507"
    assert (c.model.lora.r, c.model.lora.alpha, c.model.lora.dropout) == (8, 16, 0.05)
    assert set(c.model.lora.target_modules) == {
        "q_proj",
        "k_proj",
        "v_proj",
        "o_proj",
        "gate_proj",
        "up_proj",
        "down_proj",
    }


@pytest.mark.parametrize(
    "override, message",
    [
        ("train.max_stepz=3", r"train\.max_stepz: unknown key"),
        ("train.max_steps=ten", r"train\.max_steps: Expected `int`, got `str`"),
        ("train.max_steps=0", r"train\.max_steps: Expected `int` >= 1"),
        ("data.mix.gsm8k=0.5", r"data\.mix: shares sum to 1\.25"),
        (
            "engine.strategy=ppo",
            r"engine: trl×ppo is not supported \(TRL 1\.x has no `PPOTrainer`\); supported: "
            + ", ".join(f"{e}×{s}" for e, s in pairs()),
        ),
        ("engine.name=jax", r"engine\.name: Invalid enum value 'jax'"),
        ("train.update_epochs=2", r"train\.update_epochs: the trl engine makes one update per generation"),
        ("train.target_kl=0.03", r"train\.target_kl: GRPO adapts β to it, so train\.beta must start above 0"),  # β is 0
        ("train.num_generations=3", r"train\.num_generations: 3 must divide the batch"),
        ("model.dtype=fp8", r"model\.dtype: Invalid enum value 'fp8'"),
    ],
)
def test_bad_values_are_refused_with_the_dotted_key(override, message):
    with pytest.raises(BadInput, match=message):
        load_config(CONFIGS / "local.yaml", [override])


def test_overrides_change_the_fingerprint_and_parse_numbers():
    base = load_config(CONFIGS / "local.yaml")
    changed = load_config(CONFIGS / "local.yaml", ["train.learning_rate=5e-4", "train.max_steps=20"])
    assert changed.config.train.learning_rate == 5e-4 and changed.config.train.max_steps == 20
    assert changed.sha256 != base.sha256


def test_malformed_yaml_names_file_line_and_column(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("profile: local\nrun: [unclosed\n")
    with pytest.raises(BadInput, match=r"bad\.yaml:\d+:\d+: malformed YAML"):
        load_config(bad)


def test_a_missing_file_is_bad_input(tmp_path):
    with pytest.raises(BadInput, match="config file not found"):
        load_config(tmp_path / "nope.yaml")


def test_target_kl_is_refused_where_it_would_not_act_and_the_message_names_the_fix():
    acting = ", ".join(with_target_kl())  # grpo, ppo, rloo
    with pytest.raises(
        BadInput,
        match=rf"train\.target_kl: sft has no KL term to hold near a target \(it acts on "
        rf"{acting}\); remove it, or add --set train\.target_kl=null",
    ):
        load_config(
            CONFIGS / "local.yaml",
            ["engine.name=torch", "engine.strategy=sft", "train.target_kl=0.03", "finetune.method=lora"],
        )


def test_target_kl_may_be_left_out_and_sft_dpo_run_without_it():
    for strategy in ("sft", "dpo"):
        c = load_config(
            CONFIGS / "local.yaml",
            [
                *RECORDED,
                "engine.name=torch",
                f"engine.strategy={strategy}",
                "train.target_kl=null",
                "finetune.method=lora",
                "train.beta=0.1",
            ],
        )
        assert c.config.train.target_kl is None


def test_trl_dpo_samples_two_replies_per_prompt_so_asks_for_a_group_of_two():
    dpo = [*RECORDED, "engine.strategy=dpo", "train.beta=0.1"]
    with pytest.raises(BadInput, match=r"train\.num_generations: TRL's OnlineDPOTrainer samples 2 replies per prompt"):
        load_config(CONFIGS / "local.yaml", dpo)
    assert load_config(CONFIGS / "local.yaml", [*dpo, "train.num_generations=2"]).config.engine.strategy == "dpo"


def test_priority_sampling_is_validated_and_refused_where_no_reward_is_seen():
    assert load_config(CONFIGS / "local.yaml").config.priority_sampling is None  # the embedded default: passes
    loaded = load_config(CONFIGS / "local.yaml", ["priority_sampling.low_perf_cap=0.25"])
    assert loaded.config.priority_sampling.low_perf_cap == 0.25
    assert loaded.config.priority_sampling.seed_ratio_schedule == [(0, 1.0)]
    with pytest.raises(BadInput, match=r"priority_sampling: SFT trains on gold replies"):
        load_config(
            CONFIGS / "local.yaml", ["priority_sampling.low_perf_cap=0", "engine.strategy=sft", "train.target_kl=null"]
        )
    with pytest.raises(BadInput, match=r"priority_sampling\.seed_ratio_schedule: .* strictly ascending from 0"):
        load_config(CONFIGS / "local.yaml", ["priority_sampling.seed_ratio_schedule=[[5, 1.0], [2, 0.5]]"])
    with pytest.raises(BadInput, match=r"priority_sampling\.by_difficulty: give at least one bucket"):
        load_config(CONFIGS / "local.yaml", ["priority_sampling.by_difficulty={easy: 0, medium: 0, hard: 0}"])


def test_a_source_is_a_file_or_a_hub_dataset_never_both_nor_neither():
    hub = [
        "data.sources.gsm8k.hub=openai/gsm8k",
        "data.sources.gsm8k.subset=main",
        "data.sources.gsm8k.shadow_split=test",
    ]
    source = load_config(CONFIGS / "local.yaml", hub).config.data.sources["gsm8k"]
    assert (source.hub, source.subset, source.split, source.shadow_split) == ("openai/gsm8k", "main", "train", "test")
    with pytest.raises(BadInput, match=r"data\.sources\.gsm8k: give `path` .* or `hub` .*, one of them"):
        load_config(CONFIGS / "local.yaml", [*hub, "data.sources.gsm8k.path=train.jsonl"])
    with pytest.raises(BadInput, match=r"data\.sources\.gsm8k: give `path`"):
        load_config(CONFIGS / "local.yaml", ["data.sources.gsm8k.split=test"])
    with pytest.raises(
        BadInput, match=r"data\.sources\.gsm8k: `subset`, `split` and `shadow_split` choose within a hub"
    ):
        load_config(
            CONFIGS / "local.yaml", ["data.sources.gsm8k.path=train.jsonl", "data.sources.gsm8k.shadow_split=test"]
        )
    with pytest.raises(
        BadInput, match=r"data\.sources\.gsm8k: a hub source names its held-out records with `shadow_split`"
    ):
        load_config(CONFIGS / "local.yaml", [*hub, "data.sources.gsm8k.shadow_path=test.jsonl"])


def test_full_fine_tuning_is_accepted_for_the_trl_engine_and_refused_for_the_torch_engine():
    assert load_config(CONFIGS / "local.yaml", ["finetune.method=full"]).config.finetune.method == "full"
    with pytest.raises(
        BadInput,
        match=r"local\.yaml: finetune\.method: full is trained by the trl engine; .* Use "
        r"engine\.name trl, or finetune\.method lora",
    ):
        load_config(CONFIGS / "local.yaml", [*RECORDED, "finetune.method=full", "engine.name=torch"])
    sft = load_config(
        CONFIGS / "local.yaml", [*RECORDED, "finetune.method=full", "engine.strategy=sft", "train.target_kl=null"]
    )
    assert (sft.config.engine.strategy, sft.config.finetune.method) == ("sft", "full")


def test_an_unknown_key_inside_a_set_value_is_matched_against_its_siblings():
    """The key the user meant sits beside the unknown one: `min` under monitors.entropy_floor is its `min_entropy`,
    named by its full path, never the section the --set names (which exists)."""
    with pytest.raises(BadInput) as refused:
        load_config(CONFIGS / "local.yaml", ["monitors.entropy_floor={min: 1000}"])
    assert str(refused.value) == (
        "--set monitors.entropy_floor={min: 1000}: monitors.entropy_floor.min: unknown key (check the spelling; "
        "unknown keys are refused); did you mean monitors.entropy_floor.min_entropy?"
    )


@pytest.mark.parametrize(
    "override, meant",
    [
        ("trian.max_steps=3", "train.max_steps"),  # a typo in the section, on the override's path
        ("relase.samples=3", "release.samples"),
        ("train.lerning_rate=1e-4", "train.learning_rate"),  # the last key of the override
        ("model.lora={rank: 4}", "model.lora.r"),  # inside the value, two levels down
        ("data.tasks.mine={pth: mine.jsonl}", "data.tasks[...].path"),  # a dict's entry, as msgspec names it
        ("reward.functions=[{nme: mine}]", "reward.functions.0.name"),  # an entry of a list of sections
    ],
)
def test_an_unknown_key_names_the_key_meant_by_its_full_path(override, meant):
    with pytest.raises(BadInput, match=rf"; did you mean {re.escape(meant)}[ ?]"):
        load_config(CONFIGS / "local.yaml", [override])


def test_an_unknown_nested_key_in_the_file_is_matched_against_its_siblings():
    raw = yaml.safe_load((CONFIGS / "local.yaml").read_text())
    raw.setdefault("monitors", {})["entropy_floor"] = {"min": 1000}
    with pytest.raises(
        BadInput,
        match=r"local\.yaml: monitors\.entropy_floor\.min: unknown key .*; did you mean "
        r"monitors\.entropy_floor\.min_entropy\?",
    ):
        load_config(CONFIGS / "local.yaml", raw=raw)
