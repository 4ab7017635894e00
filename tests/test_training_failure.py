"""A training failure: FATAL on stderr, exit 1, reports/ERROR_<ts>.json, reports/FAIL_<ts>.tar.gz, training_failed in
the log."""

import json
import tarfile

import pytest

from conftest import events, make_workspace, rc1

pytestmark = pytest.mark.e2e


def test_a_diverging_run_fails_loudly_and_leaves_a_report(tmp_path):
    root = make_workspace(tmp_path, **{"train.learning_rate": 1.0e30})
    result = rc1(root, "advance", "--all")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "FATAL: training failed at step" in result.stderr and "Traceback" not in result.stderr
    last = events(root)[-1]
    assert last["type"] == "training_failed" and "diverged" in last["error"]
    report = json.loads((root / last["report"]).read_text())
    assert report["trace"] and report["log_tail"] and "diverged" in report["error"]
    # The FATAL wrote the failpack by itself, and says where: the report, the log and the run's logs are in it.
    (pack,) = root.glob("reports/FAIL_*.tar.gz")
    assert f"everything packed in {pack.relative_to(root)}" in result.stderr
    with tarfile.open(pack) as tar:
        names = set(tar.getnames())
    assert {last["report"], "events/local.jsonl", "logs/train.log", "configs/short.yaml"} <= names
    assert not any(name.endswith(".lock") for name in names)
    status = json.loads(rc1(root, "status", "--json").stdout)
    assert status["state"] == "TRAINING" and "training failed" in status["last_error"]
    assert rc1(root, "audit").returncode == 0
