"""Each run keeps its own inputs: round 1 keeps a copy of the weights file and the template pack beside the config it
keeps, and the run reads those from then on. Editing configs/weights.json for a new run leaves an older run's status
and audit alone; editing the run's own copy is still a changed gated input."""

import json

from conftest import make_workspace, rc1_here

from rc1.data.templates import pack_sha256


def _status(root, *args):
    shown = rc1_here(root, "status", "--json", *args)
    assert shown.returncode == 0, shown.stderr
    return json.loads(shown.stdout)


def test_a_run_keeps_its_weights_and_templates_and_a_new_run_takes_the_edited_file(tmp_path):
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

    assert rc1_here(root, "preflight", "--round", "1", "--run", "other").returncode == 0
    assert json.loads((root / "data/other/weights.json").read_text()) == weights
    other = _status(root, "--run", "other")["gates"]["round1"]["fingerprints"]
    assert other["weights"] != recorded["weights"] and other["templates"] != recorded["templates"]

    kept_weights.write_text(json.dumps(weights))  # the run's own copy edited: its gate no longer holds
    changed = _status(root)["gates"]["round1"]
    assert changed["inputs_match"] is False and changed["changed"] == ["weights"]
    refused = rc1_here(root, "advance")
    assert refused.returncode == 3 and "weights" in refused.stderr
