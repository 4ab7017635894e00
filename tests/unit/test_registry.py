"""The registry (rc1/registry/) is the only table of strategies, engines, scorer providers and trackers: config
accepts exactly its names and pairs, its help is written from their specs, the documented tables are its, every
"module:attr" it names resolves, every tracker has its backend and its extra, and config validates without importing
torch or trl."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from typing import Annotated, get_args, get_origin

import msgspec
import pytest
from conftest import REPO

from rc1.config.loading import load_config
from rc1.config.recorded import recorded_overrides
from rc1.config.schema import EngineConfig, ScorerConfig, TrackingConfig
from rc1.core.errors import BadInput
from rc1.registry.engines import ENGINES
from rc1.registry.providers import PROVIDERS
from rc1.registry.spec import load
from rc1.registry.strategies import STRATEGIES, pairs
from rc1.registry.trackers import TRACKERS
from rc1.views.trackers import BACKENDS

LOCAL = REPO / "configs" / "local.yaml"
RECORDED = recorded_overrides()  # live episodes are GRPO on TRL only: the other pairs are tried on the recorded default


def _annotation(struct, field: str):
    """The field's type, without the Annotated[…, Meta(description=…)] around it."""
    kind = {f.name: f.type for f in msgspec.structs.fields(struct)}[field]
    return get_args(kind)[0] if get_origin(kind) is Annotated else kind


def test_config_accepts_exactly_the_registry_names():
    assert get_args(_annotation(EngineConfig, "name")) == tuple(ENGINES)
    assert get_args(_annotation(EngineConfig, "strategy")) == tuple(STRATEGIES)
    assert get_args(_annotation(ScorerConfig, "provider")) == tuple(PROVIDERS)
    assert get_args(get_args(_annotation(TrackingConfig, "report_to"))[0]) == tuple(TRACKERS)


@pytest.mark.parametrize("engine", sorted(ENGINES))
@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
def test_config_accepts_exactly_the_registry_pairs(engine, strategy):
    spec = STRATEGIES[strategy]
    overrides = [
        *RECORDED,
        f"engine.name={engine}",
        f"engine.strategy={strategy}",
        "finetune.method=lora",
        "train.beta=0.04",
        "train.target_kl=0.03" if spec.target_kl else "train.target_kl=null",
    ]
    overrides += ["train.num_generations=2"] if spec.trl and spec.trl.replies_per_prompt else []
    if (engine, strategy) in pairs():
        assert load_config(LOCAL, overrides).config.engine.strategy == strategy
    else:
        with pytest.raises(BadInput, match=rf"engine: {engine}×{strategy} is not supported"):
            load_config(LOCAL, overrides)


def test_every_strategy_runs_somewhere_and_says_why_not_elsewhere():
    for name, spec in STRATEGIES.items():
        assert spec.name == name and spec.engines and set(spec.engines) <= set(ENGINES)
        assert set(spec.not_on or {}) == set(ENGINES) - set(spec.engines), name


def test_every_reference_the_registry_names_resolves():
    references = [ENGINES[name].engine for name in ENGINES]
    for spec in STRATEGIES.values():
        if spec.trl is not None:
            references += [spec.trl.trainer, spec.trl.arguments] + ([spec.trl.probe] if spec.trl.probe else [])
        if spec.torch is not None:
            references.append(spec.torch.objective)
    references += [spec.backend for spec in PROVIDERS.values() if spec.backend is not None]
    for reference in references:
        assert callable(load(reference)), reference


def _markdown_table(text: str, header_start: str) -> list[list[str]]:
    lines = text[text.index(header_start) :].splitlines()
    rows = []
    for line in lines:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split(" | ")])
    return [rows[0]] + rows[2:]  # without the |---| line


def test_the_documented_engine_strategy_table_is_the_registry():
    table = _markdown_table((REPO / "docs/tables.md").read_text(encoding="utf-8"), "| engine \\ strategy |")
    assert table[0] == ["engine \\ strategy"] + [f"`{name}`" for name in STRATEGIES]
    expected = []
    for engine in ENGINES:
        cells = []
        for spec in STRATEGIES.values():
            recipe = getattr(spec, engine)  # the spec's recipe for this engine (TrlRecipe, TorchRecipe) or None
            cells.append(recipe.about if recipe is not None else f"— {spec.not_on[engine]}")
        expected.append([f"`{engine}`"] + cells)
    assert table[1:] == expected


def test_the_docs_provider_table_names_every_provider_once():
    table = _markdown_table((REPO / "docs/scoring.md").read_text(encoding="utf-8"), "| `scorer.provider` |")
    named = [name for row in table[1:] for name in re.findall(r"`([a-z_0-9]+)`", row[0])]
    assert sorted(named) == sorted(PROVIDERS)


def test_config_validation_imports_neither_torch_nor_trl():
    code = (
        "import sys; from rc1.config.loading import load_config; "
        f"load_config({str(LOCAL)!r}, [*{RECORDED!r}, 'engine.name=torch', 'engine.strategy=ppo', "
        "'finetune.method=lora', "
        "'train.beta=0.04', 'train.target_kl=0.03', 'scorer.provider=openai', 'reward.weights=weights_judge.json']); "
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'trl', 'transformers', 'openai', "
        "'peft')); "
        "print(heavy); sys.exit(bool(heavy))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert result.returncode == 0, result.stdout + result.stderr


def test_switching_strategy_on_the_command_line_names_the_fix():
    rc1 = REPO / "configs" / "rc1.yaml"
    with pytest.raises(BadInput) as refused:
        load_config(rc1, ["engine.strategy=sft"])
    message = str(refused.value)
    assert "train.target_kl: sft has no KL term" in message and "--set train.target_kl=null" in message
    assert "--set priority_sampling=null" in message and "--set train.mask_truncated_completions=false" in message
    fixes = ["train.target_kl=null", "priority_sampling=null", "train.mask_truncated_completions=false"]
    fixed = load_config(rc1, ["engine.strategy=sft", *fixes])
    assert fixed.config.engine.strategy == "sft" and fixed.config.train.target_kl is None


def _description(struct, field: str) -> str:
    return {f.name: f for f in msgspec.inspect.type_info(struct).fields}[field].type.extra_json_schema["description"]


def test_the_engine_and_strategy_help_is_written_from_their_specs():
    strategy = _description(EngineConfig, "strategy")
    for name, spec in STRATEGIES.items():
        assert f"{name} ({', '.join(spec.engines)}): {spec.about}" in strategy
    engine = _description(EngineConfig, "name")
    for name, spec in ENGINES.items():
        runs = [strategy for strategy, s in STRATEGIES.items() if name in s.engines]
        assert f"{name}: {spec.about}, running {', '.join(runs[:-1])} and {runs[-1]}" in engine


def test_every_tracker_has_its_backend_in_the_view():
    """rc1/views/trackers.py looks a tracker's backend up by name: its table holds exactly the registry's names, in
    its order, each backend class naming itself as the registry does."""
    assert list(BACKENDS) == list(TRACKERS)
    assert all(backend.name == name for name, backend in BACKENDS.items())


def test_every_tracker_s_extra_is_in_pyproject():
    tomllib = pytest.importorskip("tomllib" if sys.version_info >= (3, 11) else "tomli")
    extras = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    for name, spec in TRACKERS.items():
        assert spec.name == name and spec.about and spec.settings and spec.alerts, name
        assert spec.extra in extras, f"{name}: add the extra {spec.extra!r} to [project.optional-dependencies]"


def test_tracking_help_names_each_tracker_and_ls_shows_its_spec():
    help_text = _description(TrackingConfig, "report_to")
    assert all(f"{name} ({spec.settings})" in help_text for name, spec in TRACKERS.items())
    from rc1.cli.commands.ls import trackers

    rows = {row.name: row for row in trackers()}
    for name, spec in TRACKERS.items():
        assert rows[name].about == spec.about
        assert rows[name].details["install"] == f"pip install -e '.[{spec.extra}]'"
        assert rows[name].details["alerts"] == spec.alerts


def test_a_tracker_whose_client_is_missing_is_refused_naming_its_extra(monkeypatch):
    """config reads the client and the extra off the spec: a client that is not installed is refused at load."""
    monkeypatch.setitem(TRACKERS, "wandb", dataclasses.replace(TRACKERS["wandb"], module="rc1_no_such_client"))
    with pytest.raises(
        BadInput, match=r"tracking\.report_to: wandb needs the 'wandb' extra \(pip install -e '\.\[wandb\]'\)"
    ):
        load_config(LOCAL, ["tracking.report_to=[wandb]"])
