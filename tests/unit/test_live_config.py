"""Live episodes (issue 43), the config: `data.episodes: recorded | live` and `data.max_tool_rounds`, refused where no
tool loop runs them (exit 2, the fix named), the recorded default leaving every fingerprint as it was."""

import pytest
import yaml
from conftest import REPO

from rc1.config.loading import _LATER_KEYS, load_config
from rc1.core.errors import BadInput, ExitCode

LOCAL = REPO / "configs" / "local.yaml"


def test_recorded_is_the_schemas_default_and_leaves_the_fingerprint_as_it_was(tmp_path):
    """configs/local.yaml names `episodes: live`; a config that names neither key (every config written before issue
    43) is recorded, with the fingerprint it had."""
    assert load_config(LOCAL).config.data.episodes == "live"
    raw = yaml.safe_load(LOCAL.read_text())
    del raw["data"]["episodes"], raw["data"]["pages"]
    unnamed = tmp_path / "unnamed.yaml"
    unnamed.write_text(yaml.safe_dump(raw))
    plain = load_config(unnamed)
    assert plain.config.data.episodes == "recorded" and plain.config.data.max_tool_rounds == 6
    spelled = load_config(unnamed, ["data.episodes=recorded", "data.max_tool_rounds=6"])
    assert spelled.sha256 == plain.sha256
    live = load_config(unnamed, ["data.episodes=live", "monitors.drift=null"])
    assert live.sha256 != plain.sha256
    assert load_config(unnamed, ["data.max_tool_rounds=2"]).sha256 != plain.sha256


@pytest.mark.parametrize(
    "overrides, pair",
    [
        (["engine.strategy=rloo"], "trl×rloo"),
        (["engine.name=torch", "finetune.method=lora"], "torch×grpo"),
    ],
)
def test_live_episodes_need_trls_grpo_and_the_message_names_the_fix(overrides, pair):
    with pytest.raises(BadInput) as refused:
        load_config(LOCAL, ["data.episodes=live", "monitors.drift=null", *overrides])
    message = str(refused.value)
    assert f"data.episodes: live episodes run in TRL's tool loop (GRPOTrainer's environment_factory), which {pair}" in (
        message
    )
    assert "--set engine.name=trl --set engine.strategy=grpo" in message and "--set data.episodes=recorded" in message
    assert refused.value.exit_code == ExitCode.BAD_INPUT == 2


def test_max_tool_rounds_is_bounded():
    with pytest.raises(BadInput, match=r"data\.max_tool_rounds"):
        load_config(LOCAL, ["data.max_tool_rounds=0"])


def test_max_tool_rounds_default_is_the_schemas_and_leaves_the_fingerprint():
    """The default was raised to cover every built-in gold path (one round per call, an ask and up to 5 calc steps):
    a later key left out of the fingerprint at its default, so the default there must be the schema's."""
    assert _LATER_KEYS["data.max_tool_rounds"] == load_config(LOCAL).config.data.max_tool_rounds == 6
    assert load_config(LOCAL, ["data.max_tool_rounds=6"]).sha256 == load_config(LOCAL).sha256


def test_live_episodes_keep_the_drift_monitor():
    """Before: refused at load (a live evaluation's replies were not scored for drift); now its episodes' first turns
    are (tests/e2e/test_live_generation.py), so a live config is the recorded one with one key changed."""
    live = load_config(LOCAL, ["data.episodes=live"]).config
    assert live.monitors.drift == load_config(LOCAL).config.monitors.drift is not None


def test_wiki_shows_the_pages_by_default_and_the_empty_control_is_live_only():
    """`data.wiki: empty` is the control arm's (wiki shows no pages); a later key, so every config without it keeps its
    fingerprint, and a recorded run, whose tool steps are written into the prompt, refuses it by name."""
    plain = load_config(LOCAL)
    assert plain.config.data.wiki == "pages" == _LATER_KEYS["data.wiki"]
    assert load_config(LOCAL, ["data.wiki=pages"]).sha256 == plain.sha256
    live = ["data.episodes=live", "monitors.drift=null"]
    assert load_config(LOCAL, [*live, "data.wiki=empty"]).sha256 != load_config(LOCAL, live).sha256
    with pytest.raises(BadInput, match=r"data\.wiki: empty is what wiki shows in live episodes; use --set data\.epis"):
        load_config(LOCAL, ["data.episodes=recorded", "data.wiki=empty"])
    with pytest.raises(BadInput, match=r"data\.wiki"):
        load_config(LOCAL, [*live, "data.wiki=nothing"])


def test_a_live_run_s_built_in_model_is_cached_apart_from_a_recorded_one_s(tmp_path):
    """Their tokenizers are trained on different texts: one cache folder for both, with `make bench` running them
    side by side, had each build replace the other's (and `rc1 score` read whichever was built last)."""
    from rc1.app.policy import builtin_model_dir
    from rc1.core.workspace import Workspace

    ws = Workspace(root=tmp_path, run="local")
    ws.balanced_pool_path.parent.mkdir(parents=True)
    ws.balanced_pool_path.write_text("{}\n")
    recorded, live = builtin_model_dir(ws, 1234), builtin_model_dir(ws, 1234, live=True)
    assert recorded.parent == live.parent == ws.model_cache_dir
    assert recorded.name.startswith("tiny-qwen3-") and live.name.startswith("tiny-qwen3-live-")
    assert recorded.name.removeprefix("tiny-qwen3-") == live.name.removeprefix("tiny-qwen3-live-")
