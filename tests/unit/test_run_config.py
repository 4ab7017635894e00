"""A run remembers the config round 1 passed on: a command naming only the run uses it, one asking for another
config is refused (exit 3, nothing appended) naming each differing key, and --accept-changed-inputs changes it on
purpose (gate_invalidated, as for any gated input)."""

import json

from conftest import events, make_workspace, rc1_here


def test_a_run_keeps_its_config_and_refuses_another_until_told_to_accept_it(tmp_path):
    root = make_workspace(tmp_path)
    assert rc1_here(root, "preflight", "--round", "1", "--set", "train.max_steps=8").returncode == 0
    kept = json.loads((root / "data/local/config.json").read_text())
    passed = next(e for e in events(root) if e["type"] == "round1_passed")
    assert kept["sha256"] == passed["fingerprints"]["config"] and kept["config"]["train"]["max_steps"] == 8
    log = root / "events/local.jsonl"
    before = log.read_bytes()

    refused = rc1_here(root, "advance")  # configs/short.yaml without the override: 12 steps
    assert refused.returncode == 3 and "train.max_steps: 8 (kept) -> 12" in refused.stderr
    assert "--accept-changed-inputs" in refused.stderr and log.read_bytes() == before

    same = rc1_here(root, "status", "--json", "--set", "train.max_steps=8")  # asks for what it kept: fine
    assert same.returncode == 0 and json.loads(same.stdout)["state"] == "R1_PASSED"
    by_name = rc1_here(root, "status", "--json", "--run", "local", config=None)  # configs/local.yaml differs now
    assert by_name.returncode == 0 and "uses the config it kept at round 1" in by_name.stderr
    assert json.loads(by_name.stdout)["gates"]["round1"]["inputs_match"] is True

    text = (root / "data/local/config.json").read_text()
    (root / "data/local/config.json").write_text(text.replace('"max_steps": 8', '"max_steps": 9'))
    edited = rc1_here(root, "status", "--run", "local", config=None)
    assert edited.returncode == 3 and "data/local/config.json" in edited.stderr and "was changed since" in edited.stderr
    (root / "data/local/config.json").write_text(text)

    accepted = rc1_here(root, "advance", "--accept-changed-inputs")
    assert accepted.returncode == 3 and "the gate is invalidated" in accepted.stderr
    invalidated = events(root)[-1]
    assert invalidated["type"] == "gate_invalidated" and invalidated["input"] == "config"
    assert invalidated["old_sha256"] == kept["sha256"]
    status = json.loads(rc1_here(root, "status", "--json").stdout)  # no gate in force: the config asked for
    assert status["state"] == "INIT" and status["allowed"] == ["round1_passed"]
