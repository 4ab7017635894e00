"""A run remembers the config it was started with (its first command), which round 1 then passes on: a command naming
only the run uses it, one asking for another config is refused (exit 3, nothing appended) naming each differing key
and a run of its own first, and --accept-changed-inputs changes it on purpose (gate_invalidated, as for any gated
input)."""

import json
import re
from pathlib import Path

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
    by_name = rc1_here(root, "status", "--json", "--run", "local", config=None)  # the run's own, not local.yaml
    assert by_name.returncode == 0 and json.loads(by_name.stdout)["gates"]["round1"]["inputs_match"] is True
    assert "uses the config it was started with" not in by_name.stderr  # local.yaml is not the run's file

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
    # the command that changed it keeps the new config: the run's from now on
    started = [e for e in events(root) if e["type"] == "run_started"]
    assert [e["keeps"] for e in started] == [True, True]  # round 1 (the first command), then the accepted change
    assert json.loads((root / "data/local/config.json").read_text())["config"]["train"]["max_steps"] == 12


def test_a_run_whose_round_1_failed_goes_on_with_the_config_it_was_started_with(tmp_path):
    """The run is its first command's: round 1 fails, its input is fixed, and `rc1 advance --run mine` (what status
    says to run) goes on with configs/mine.yaml, not with the default config."""
    root = make_workspace(tmp_path)
    short = (root / "configs/short.yaml").read_text()
    (root / "configs/mine.yaml").write_text(
        short.replace("name: local", "name: mine").replace("weights: weights.json", "weights: weights_mine.json")
    )
    good = (root / "configs/weights.json").read_text()
    (root / "configs/weights_mine.json").write_text(good.replace("0.5", "0.9"))  # its weights no longer sum to 1
    failed = rc1_here(root, "advance", config="configs/mine.yaml")
    assert failed.returncode == 3 and "weights" in failed.stderr
    status = json.loads(rc1_here(root, "status", "--json", "--run", "mine", config=None).stdout)
    assert status["state"] == "INIT" and status["next"].endswith("then rc1 advance --run mine")

    (root / "configs/weights_mine.json").write_text(good)
    resumed = rc1_here(root, "advance", "--run", "mine", config=None)
    assert resumed.returncode == 0, resumed.stderr
    started = [e for e in events(root, run="mine") if e["type"] == "run_started"]
    assert [Path(e["config_path"]).name for e in started] == ["mine.yaml", "mine.yaml"]  # not local.yaml
    assert [e["keeps"] for e in started] == [True, False]
    kept = json.loads((root / "data/mine/config.json").read_text())
    assert kept["config"]["data"]["pool_size"] == 240 and kept["config"]["reward"]["weights"] == "weights_mine.json"
    assert events(root, run="mine")[-1]["type"] == "round1_passed"
    now = rc1_here(root, "status", "--json", "--run", "mine", config=None)
    assert json.loads(now.stdout)["last_error"] is None  # round 1's failure is behind the run
    text = rc1_here(root, "status", "--run", "mine", config=None).stdout
    assert "allowed    round 2\n" in text  # what a command does next, not the machine's internal triggers


def test_a_command_naming_only_the_run_notes_an_edit_of_the_runs_own_file_and_no_other(tmp_path):
    root = make_workspace(tmp_path)
    assert rc1_here(root, "preflight", "--round", "1", config="configs/local.yaml").returncode == 0
    local = root / "configs/local.yaml"
    local.write_text(re.sub(r"max_steps: \d+", "max_steps: 37", local.read_text(), count=1))
    noted = rc1_here(root, "status", "--run", "local", config=None)
    assert noted.returncode == 0 and "uses the config it was started with" in noted.stderr
    assert "local.yaml differs now (train.max_steps)" in noted.stderr
