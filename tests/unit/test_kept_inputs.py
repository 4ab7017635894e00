"""Each run keeps its own inputs: round 1 keeps a copy of the weights file and the template pack beside the config it
keeps, and the run reads those from then on. Editing configs/weights.json for a new run leaves an older run's status
and audit alone; editing the run's own copy is still a changed gated input."""

import json

from conftest import make_workspace, rc1_here

from rc1.config.kept import load_run_config
from rc1.data.templates import pack_sha256


def _status(root, *args):
    shown = rc1_here(root, "status", "--json", *args)
    assert shown.returncode == 0, shown.stderr
    return json.loads(shown.stdout)


def test_a_run_keeps_its_weights_and_templates_and_a_new_run_takes_the_edited_file(tmp_path, monkeypatch):
    root = make_workspace(tmp_path)
    assert rc1_here(root, "preflight", "--round", "1").returncode == 0
    kept_weights, kept_pack = root / "data/local/weights.json", root / "data/local/templates"
    original = (root / "configs/weights.json").read_bytes()
    assert kept_weights.read_bytes() == original
    assert pack_sha256(kept_pack) == pack_sha256(root / "configs/templates/pack_v2")
    recorded = _status(root)["gates"]["round1"]["fingerprints"]

    weights = json.loads(original)
    weights["format"], weights["length"] = weights["length"], weights["format"]
    (root / "configs/weights.json").write_text(json.dumps(weights))  # edited for a new run
    (root / "configs/templates/pack_v2/styles.yaml").write_text(
        (root / "configs/templates/pack_v2/styles.yaml").read_text() + "\n# a new run's edit\n"
    )
    status = _status(root)
    assert status["state"] == "R1_PASSED" and status["gates"]["round1"]["inputs_match"] is True
    assert rc1_here(root, "audit").returncode == 0
    monkeypatch.chdir(root)  # a writer naming the config (make resume does) reads the run's copies too
    writing = load_run_config("configs/short.yaml", [])
    assert writing.weights_path == kept_weights and writing.templates_path == kept_pack
    monkeypatch.undo()

    assert rc1_here(root, "preflight", "--round", "1", "--run", "other").returncode == 0
    assert json.loads((root / "data/other/weights.json").read_text()) == weights
    other = _status(root, "--run", "other")["gates"]["round1"]["fingerprints"]
    assert other["weights"] != recorded["weights"] and other["templates"] != recorded["templates"]

    kept_weights.write_text(json.dumps(weights))  # the run's own copy edited: its gate no longer holds
    changed = _status(root)["gates"]["round1"]
    assert changed["inputs_match"] is False and changed["changed"] == ["weights"]
    refused = rc1_here(root, "advance")
    assert refused.returncode == 3 and "weights" in refused.stderr


def test_a_run_kept_before_reward_formats_keeps_its_fingerprint_and_its_text_functions(tmp_path):
    """Frozen: the config values an rc1 before reward formats kept for a run with one reward function (bb10bf1), and
    the sha256 its round1_passed recorded. Read back, its functions are called with text, as they were, and the
    fingerprint is the one its gates passed on."""
    from conftest import REPO

    raw = json.loads((REPO / "tests/data/kept_config_before_reward_formats.json").read_text())
    (tmp_path / "my_rewards.py").write_text(
        "def brevity(prompts, completions, completion_tokens, **kw):\n    return [1.0 for _ in completions]\n"
    )
    from rc1.config.kept import KeptConfig, _load_kept
    from rc1.core.workspace import Workspace

    kept = KeptConfig(config_path="fp.yaml", overrides=[], sha256="", config=raw)
    loaded = _load_kept(Workspace(root=tmp_path, run="local"), kept)
    assert loaded.config.reward.functions[0].format == "text"
    assert loaded.sha256 == "0157cdf5c29a3a699f82c76c20b5524d5026f1516a714283451e0255b5024b08"


def test_a_run_kept_with_a_monitors_section_of_its_own_keeps_its_fingerprint_after_the_tool_use_rules(tmp_path):
    """Frozen: the sha256 an rc1 before the rules on a live line's tool use (tool_failures, tool_hops_drift,
    over_asking, never_asking) gave the kept config above with monitors.drift: null (which a live run must set) and
    with truncation's ceiling moved too. Read back, the new rules take their defaults, which `_LATER_KEYS` leaves out
    of the fingerprint, as it leaves out a monitors section at its defaults whole; a rule set otherwise is a change."""
    from conftest import REPO

    from rc1.config.kept import KeptConfig, _load_kept
    from rc1.core.workspace import Workspace

    raw = json.loads((REPO / "tests/data/kept_config_before_reward_formats.json").read_text())
    (tmp_path / "my_rewards.py").write_text(
        "def brevity(prompts, completions, completion_tokens, **kw):\n    return [1.0 for _ in completions]\n"
    )

    def sha(monitors: dict) -> str:
        config = {**raw, "monitors": {**raw["monitors"], **monitors}}
        kept = KeptConfig(config_path="fp.yaml", overrides=[], sha256="", config=config)
        return _load_kept(Workspace(root=tmp_path, run="local"), kept).sha256

    live = sha({"drift": None})
    assert live == "2e50d681913b8ba3625030192afefdc8b61fa3955877a4aa7bf4efb2bd4fc78c"
    truncation = {**raw["monitors"]["truncation"], "max_share": 0.3}
    assert sha({"drift": None, "truncation": truncation}) == (
        "c5c9e69df13fb3d9951d6519404a17fe56df4fdfb916c3ecfbb5c9786db30e05"
    )
    assert sha({"drift": None, "tool_failures": None}) != live
    assert sha({"drift": None, "never_asking": {"min_share": 0.5}}) != live
