"""A config that explains itself: every field carries its description, `rc1 config explain` shows each key's value and
where it came from, `rc1 config schema` is a JSON schema editors can validate a config file with. Both are read-only."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path

import msgspec
import msgspec.inspect as mi
import pytest
import yaml
from conftest import PATIENCE, REPO, make_workspace, rc1_here

from rc1.config.loading import config_sha256, effective_yaml, load_config
from rc1.config.schema import Config

CONFIGS = REPO / "configs"


def _fields(struct: mi.StructType, prefix: str = ""):
    """(dotted key, description, type) of every field of `struct` and of every section under it, dicts of sections
    and optional sections included."""
    for field in struct.fields:
        kind, description = field.type, ""
        if isinstance(kind, mi.Metadata):
            kind, description = kind.type, (kind.extra_json_schema or {}).get("description", "")
        yield prefix + field.name, description, kind
        for section in _structs_in(kind):
            yield from _fields(section, f"{prefix}{field.name}.")


def _structs_in(kind: mi.Type) -> list[mi.StructType]:
    if isinstance(kind, mi.Metadata):
        return _structs_in(kind.type)
    if isinstance(kind, mi.StructType):
        return [kind]
    if isinstance(kind, mi.UnionType):
        return [s for t in kind.types for s in _structs_in(t)]
    if isinstance(kind, (mi.ListType, mi.DictType)):
        return _structs_in(kind.value_type if isinstance(kind, mi.DictType) else kind.item_type)
    return []


def _documented_section(kind: mi.Type) -> bool:
    structs = _structs_in(kind)
    return bool(structs) and all((s.cls.__doc__ or "").strip() for s in structs)


def test_every_field_of_the_config_has_a_description():
    fields = list(_fields(mi.type_info(Config)))
    assert len(fields) > 90
    # A section's description is its docstring (the schema's $defs carry it); every other field has its own Meta.
    missing = [key for key, description, kind in fields if not (description.strip() or _documented_section(kind))]
    assert not missing, f"give these a msgspec.Meta(description=…): {missing}"


def test_provenance_leaves_the_fingerprint_and_the_effective_config_alone():
    loaded = load_config(CONFIGS / "local.yaml", ["train.learning_rate=0.002"])
    assert loaded.sha256 == config_sha256(loaded.config)
    bare = msgspec.structs.replace(loaded, file_keys=frozenset())
    assert effective_yaml(bare) == effective_yaml(loaded)
    assert (
        loaded.source_of("train.learning_rate"),
        loaded.source_of("train.max_steps"),
        loaded.source_of("shadow.samples"),
    ) == ("--set", "file", "default")
    assert load_config(CONFIGS / "local.yaml", ["data.mix.gsm8k=0.25"]).source_of("data.mix") == "--set"


@pytest.fixture
def root(tmp_path) -> Path:
    return make_workspace(tmp_path)


def test_explain_shows_the_value_and_where_it_came_from(root):
    # From the file (short.yaml sets train.max_steps 12), from --set, and the default (short.yaml leaves
    # shadow.unstable_variance out).
    shown = rc1_here(root, "config", "explain", "train.max_steps")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("train.max_steps = 12\n    int ≥ 1 · required · from file configs/short.yaml\n")
    assert "Optimizer steps of each line of training." in shown.stdout
    shown = rc1_here(root, "config", "explain", "train.learning_rate", "--set", "train.learning_rate=2e-3")
    assert shown.stdout.startswith(
        "train.learning_rate = 0.002\n    float > 0 · default 1.0e-05 · from --set train.learning_rate=2e-3\n"
    )
    shown = rc1_here(root, "config", "explain", "shadow.unstable_variance")
    assert shown.stdout.startswith("shadow.unstable_variance = 0.08\n    float ≥ 0 · default 0.08 · from default\n")
    assert "Items whose new score varies more than this across samples" in shown.stdout


def test_explain_json_is_one_document_with_every_key(root):
    shown = rc1_here(root, "config", "explain", "--json", "--set", "train.learning_rate=0.002")
    assert shown.returncode == 0, shown.stderr
    document = json.loads(shown.stdout)
    rows = {row["key"]: row for row in document["keys"]}
    assert document["config"].endswith("configs/short.yaml") and document["overrides"] == ["train.learning_rate=0.002"]
    assert document["sha256"] == load_config(root / "configs/short.yaml", ["train.learning_rate=0.002"]).sha256
    # Keys inside dicts and lists of sections are shown under their templates: data.tasks.<name>.check,
    # reward.functions[].path, data.tools_of_yours[].path.
    listed = {
        key.replace("data.tasks.", "data.tasks.<name>.")
        .replace("reward.functions.", "reward.functions[].")
        .replace("data.tools_of_yours.", "data.tools_of_yours[].")
        for key, _, _ in _fields(mi.type_info(Config))
        if "sources" not in key
    }
    assert listed <= set(rows)
    assert all(row["description"] for row in rows.values())
    assert (rows["train.learning_rate"]["value"], rows["train.learning_rate"]["source"]) == (0.002, "--set")
    assert (rows["train.max_steps"]["value"], rows["train.max_steps"]["source"]) == (12, "file")
    assert (rows["release.metric"]["source"], rows["shadow.unstable_variance"]["source"]) == ("file", "default")
    assert rows["priority_sampling"]["value"] is None and rows["priority_sampling.low_perf_cap"]["absent"]
    assert rows["data.sources.<task>.hub"]["description"]  # the per-task keys, explained though none is given


def test_explain_a_section_lists_its_keys(root):
    shown = rc1_here(root, "config", "explain", "release")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("[release]  from file configs/short.yaml\n    The RC1 release gate")
    keys = [line.split(" = ")[0] for line in shown.stdout.splitlines() if " = " in line and not line.startswith(" ")]
    assert keys == [
        "release.min_hard_gain_pp",
        "release.gate_size",
        "release.samples",
        "release.tasks",
        "release.metric",
    ]
    assert "release.gate_size = 60\n" in shown.stdout  # SHORT's gate set


def test_explain_names_the_sources_a_config_gives_and_the_template_of_the_others():
    from rc1.views.config_explain import explain_rows, select

    rows = {r.key: r for r in explain_rows(load_config(CONFIGS / "rc1.yaml"))}
    assert (rows["data.sources.hotpotqa.hub"].value, rows["data.sources.hotpotqa.hub"].source) == (
        "hotpotqa/hotpot_qa",
        "file",
    )
    assert rows["data.sources.hotpotqa.split"].source == "default"
    assert [r.key for r in select(list(rows.values()), "data.sources.gsm8k.hub")] == ["data.sources.<task>.hub"]


@pytest.mark.parametrize(
    "key, suggestion",
    [
        ("train.lr", "train.learning_rate"),
        ("train.max_stepz", "train.max_steps"),
        ("relase", "release"),
        ("learning_rate", "train.learning_rate"),
        ("model.lora.rank", "model.lora.r"),
    ],
)
def test_an_unknown_key_is_exit_2_with_the_closest_keys(root, key, suggestion):
    shown = rc1_here(root, "config", "explain", key)
    assert shown.returncode == 2 and shown.stdout == ""
    assert shown.stderr.startswith(f"error: {key}: not a config key; did you mean {suggestion}")


def test_an_unknown_key_inside_a_set_value_names_its_sibling(root):
    shown = rc1_here(root, "config", "explain", "--set", "monitors.entropy_floor={min: 1000}")
    assert shown.returncode == 2 and shown.stdout == ""
    assert shown.stderr.startswith("error: --set monitors.entropy_floor={min: 1000}: monitors.entropy_floor.min: ")
    assert "did you mean monitors.entropy_floor.min_entropy?" in shown.stderr
    typo = rc1_here(root, "config", "explain", "--set", "trian.max_steps=3")  # a top-level typo, as before
    assert typo.returncode == 2 and "did you mean train.max_steps?" in typo.stderr


def test_a_bad_config_is_exit_2_as_for_every_command(root):
    shown = rc1_here(root, "config", "explain", "--set", "train.max_steps=zero")
    assert shown.returncode == 2 and "train.max_steps: Expected `int`, got `str`" in shown.stderr


def _schema() -> dict:
    from rc1.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert main(["config", "schema"]) == 0
    assert err.getvalue() == ""
    return json.loads(out.getvalue())


def _problems(schema: dict, defs: dict, node, at: str = "$") -> list[str]:
    """Objects only (what a typo breaks): keys the schema does not allow and required keys that are missing,
    following $ref and anyOf. The jsonschema package, when installed, checks everything."""
    while "$ref" in schema:
        rest = {k: v for k, v in schema.items() if k != "$ref"}
        schema = {**defs[schema["$ref"].rpartition("/")[2]], **rest}
    if "anyOf" in schema:
        objects = [s for s in schema["anyOf"] if "$ref" in s or s.get("type") == "object"]
        return _problems(objects[0], defs, node, at) if isinstance(node, dict) and objects else []
    if not isinstance(node, dict) or schema.get("type") != "object":
        return []
    properties, extra = schema.get("properties", {}), schema.get("additionalProperties")
    problems = [f"{at}.{key}: missing" for key in schema.get("required", []) if key not in node]
    for key, value in node.items():
        if key in properties:
            problems += _problems(properties[key], defs, value, f"{at}.{key}")
        elif extra is False:
            problems.append(f"{at}.{key}: not allowed")
        elif isinstance(extra, dict):
            problems += _problems(extra, defs, value, f"{at}.{key}")
    return problems


def test_the_schema_describes_every_key_and_validates_the_shipped_configs():
    schema = _schema()
    assert schema["$schema"].startswith("https://json-schema.org/") and schema["$ref"] == "#/$defs/Config"
    for name, definition in schema["$defs"].items():
        assert definition["additionalProperties"] is False and definition.get("description"), name
        for key, prop in definition["properties"].items():
            assert prop.get("description") or "$ref" in str(prop), f"{name}.{key}"
    assert schema["$defs"]["Config"]["required"] == ["profile", "run", "data", "model", "train"]
    typo = yaml.safe_load((CONFIGS / "local.yaml").read_text())
    typo["train"]["max_stepz"] = 3
    for name in ("local.yaml", "rc1.yaml"):
        assert _problems(schema, schema["$defs"], yaml.safe_load((CONFIGS / name).read_text())) == [], name
    assert _problems(schema, schema["$defs"], typo) == ["$.train.max_stepz: not allowed"]


def test_a_json_schema_validator_reads_the_schema_as_the_checker_above_does():
    jsonschema = pytest.importorskip("jsonschema")  # not one of rc1's dependencies; where it is installed
    schema = _schema()
    typo = yaml.safe_load((CONFIGS / "local.yaml").read_text())
    typo["train"]["max_stepz"] = 3
    validator = jsonschema.Draft202012Validator(schema)
    jsonschema.Draft202012Validator.check_schema(schema)
    for name in ("local.yaml", "rc1.yaml"):
        assert not list(validator.iter_errors(yaml.safe_load((CONFIGS / name).read_text()))), name
    assert [e.message for e in validator.iter_errors(typo)] == [
        "Additional properties are not allowed ('max_stepz' was unexpected)"
    ]


def test_config_commands_write_nothing_and_import_no_training_stack(root):
    before = sorted(p.relative_to(root) for p in root.rglob("*"))
    assert rc1_here(root, "config", "explain").returncode == 0
    assert rc1_here(root, "config", "explain", "nope").returncode == 2
    assert sorted(p.relative_to(root) for p in root.rglob("*")) == before  # no events/, no lock, no reports
    probe = (
        "import sys; from rc1.cli.main import main; "
        "main(['config', 'explain', 'train', '--config', 'configs/short.yaml'])"
        "; main(['config', 'schema']); "
        "print(sorted(m for m in ('torch', 'transformers', 'trl', 'peft') if m in sys.modules), file=sys.stderr)"
    )
    result = subprocess.run([sys.executable, "-c", probe], cwd=root, capture_output=True, text=True, timeout=PATIENCE)
    assert result.returncode == 0 and result.stderr.strip() == "[]", result.stderr
    assert not (root / "events").exists()
