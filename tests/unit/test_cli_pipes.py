"""The CLI at the process boundary: a reader that closes the pipe early, and `rc1 --version`."""

import subprocess
import sys

from conftest import PATIENCE, make_workspace, rc1

from rc1.core.provenance import code_version


def test_a_closed_stdout_ends_the_command_quietly_with_141_and_leaves_nothing_behind(tmp_path):
    root = make_workspace(tmp_path)
    for args in (["status", "--diagram"], ["status", "--json"], ["status"]):
        # The reader is gone before rc1 writes a byte: `rc1 status --diagram | true`, every time.
        proc = subprocess.Popen(
            [sys.executable, "-m", "rc1", *args, "--config", "configs/short.yaml"],
            cwd=root,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        proc.stdout.close()
        stderr = proc.stderr.read()
        assert proc.wait(timeout=PATIENCE) == 141, (args, stderr)
        assert "FATAL" not in stderr and "Traceback" not in stderr and "BrokenPipe" not in stderr, stderr
    reports = root / "reports"
    assert not list(reports.glob("ERROR_*")) and not list(reports.glob("FAIL_*")) if reports.exists() else True


def test_version_prints_the_code_version_a_run_records_in_run_started(tmp_path):
    result = rc1(tmp_path, "--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"rc1 {code_version()}"
