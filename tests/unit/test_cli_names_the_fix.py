"""A CLI that names the fix: an unknown run is exit 2 naming the runs the workspace has; a `--set` typo blames the
flag and says what it may have meant; a command that only reads a run answers about it with its own config, showing
what another config would change instead of refusing; `replay --until` past the end says where the log ends;
`status` names the command to run next."""

import json

import pytest
from conftest import events, make_workspace, rc1_here


@pytest.fixture(scope="module")
def round1_passed(tmp_path_factory):
    """A workspace whose run `local` passed round 1 (its config kept: configs/short.yaml)."""
    root = make_workspace(tmp_path_factory.mktemp("ws"))
    assert rc1_here(root, "preflight", "--round", "1").returncode == 0
    return root


def test_an_unknown_run_is_exit_2_naming_the_runs_the_workspace_has(round1_passed):
    for command in (["status"], ["replay", "--until", "seq:0"], ["rollouts"], ["audit"], ["report"]):
        shown = rc1_here(round1_passed, *command, "--run", "locl")
        assert shown.returncode == 2, (command, shown.stdout, shown.stderr)
        assert "no run 'locl'" in shown.stderr and "did you mean local?" in shown.stderr
        assert "its runs: local" in shown.stderr
    assert not (round1_passed / "events/locl.jsonl").exists()
    by_set = rc1_here(round1_passed, "status", "--set", "run.name=other")
    assert by_set.returncode == 2 and "its runs: local" in by_set.stderr and "rc1 advance --run other" in by_set.stderr


def test_the_default_run_and_a_new_run_s_config_are_not_refused(tmp_path):
    root = make_workspace(tmp_path)
    fresh = rc1_here(root, "status")  # the default run of a fresh workspace: nothing yet, and that is no error
    assert fresh.returncode == 0 and "state      INIT" in fresh.stdout
    assert "next       rc1 advance (round 1" in fresh.stdout
    asked = rc1_here(root, "config", "explain", "run.name", "--run", "experiment-2")  # a run not started yet
    assert asked.returncode == 0 and "run.name = experiment-2" in asked.stdout


def test_a_set_typo_blames_the_flag_and_says_what_it_may_have_meant(tmp_path):
    root = make_workspace(tmp_path)
    shown = rc1_here(root, "status", "--set", "train.lerning_rate=1e-4")
    assert shown.returncode == 2
    assert shown.stderr.startswith("error: --set train.lerning_rate=1e-4: train.lerning_rate: unknown key")
    assert "did you mean train.learning_rate?" in shown.stderr and "short.yaml" not in shown.stderr
    section = rc1_here(root, "status", "--set", "trian.max_steps=3")
    assert section.returncode == 2 and "--set trian.max_steps=3" in section.stderr
    assert "did you mean train.max_steps?" in section.stderr
    value = rc1_here(root, "status", "--set", "train.max_steps=many")
    assert value.returncode == 2 and value.stderr.startswith("error: --set train.max_steps=many: train.max_steps:")
    (root / "configs/short.yaml").write_text(
        (root / "configs/short.yaml").read_text().replace("learning_rate:", "lerning_rate:")
    )
    in_file = rc1_here(root, "status")  # the file's own typo is still the file's
    assert in_file.returncode == 2 and "configs/short.yaml: train.lerning_rate: unknown key" in in_file.stderr
    assert "did you mean train.learning_rate?" in in_file.stderr


def test_reading_a_run_with_another_config_shows_what_it_would_be_and_changes_nothing(round1_passed):
    log = round1_passed / "events/local.jsonl"
    before = log.read_bytes()
    kept = json.loads((round1_passed / "data/local/config.json").read_text())["config"]["train"]["learning_rate"]
    status = rc1_here(round1_passed, "status", "--json", "--set", "train.learning_rate=2e-3")
    assert status.returncode == 0 and json.loads(status.stdout)["state"] == "R1_PASSED"
    assert f"train.learning_rate is {kept}, would be 0.002" in status.stderr
    explained = rc1_here(round1_passed, "config", "explain", "train.learning_rate", "--set", "train.learning_rate=2e-3")
    assert explained.returncode == 0
    assert f"train.learning_rate = {kept}" in explained.stdout and "would be 0.002" in explained.stdout
    as_json = rc1_here(
        round1_passed, "config", "explain", "train.learning_rate", "--json", "--set", "train.learning_rate=2e-3"
    )
    assert json.loads(as_json.stdout)["would_be"] == {"train.learning_rate": 0.002}
    assert log.read_bytes() == before
    refused = rc1_here(round1_passed, "advance", "--set", "train.learning_rate=2e-3")  # a writer still refuses
    assert refused.returncode == 3 and "keeps the config it was started with" in refused.stderr
    assert "add --run short" in refused.stderr and log.read_bytes() == before  # a run of its own, offered first


def test_the_readme_s_config_explain_example_works_as_printed_on_a_fresh_workspace(tmp_path):
    root = make_workspace(tmp_path)
    shown = rc1_here(root, "config", "explain", "train.learning_rate", "--set", "train.learning_rate=2e-3", config=None)
    assert shown.returncode == 0, shown.stderr
    assert "train.learning_rate = 0.002" in shown.stdout and "from --set train.learning_rate=2e-3" in shown.stdout


def test_replay_past_the_end_says_where_the_log_ends(round1_passed):
    last = events(round1_passed)[-1]
    shown = rc1_here(round1_passed, "replay", "--until", "step_99999")
    assert shown.returncode == 2
    assert "no event matches --until 'step_99999'" in shown.stderr and "it has no train_step yet" in shown.stderr
    assert f"it ends at seq:{last['seq']} ({last['type']}" in shown.stderr
    by_seq = rc1_here(round1_passed, "replay", "--until", f"seq:{last['seq'] + 100}")
    assert by_seq.returncode == 2 and f"it ends at seq:{last['seq']}" in by_seq.stderr


def test_status_names_the_next_command(round1_passed):
    shown = rc1_here(round1_passed, "status", "--json")
    assert json.loads(shown.stdout)["next"].startswith("rc1 advance (round 2")
    other = rc1_here(round1_passed, "status", "--run", "local")
    assert "next       rc1 advance (round 2" in other.stdout
