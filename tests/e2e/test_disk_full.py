"""A real write failure: the log's file may not grow past a limit (RLIMIT_FSIZE, as a full disk would stop
it). The append that meets the limit cuts its own partial line back, the FATAL says which disk and how much
is free, the log stays whole, and a later run completes with the same steps as one that never failed."""

import resource
import signal
import subprocess
import sys

from conftest import PATIENCE, REPO, events, make_workspace, rc1_here

from rc1.eventlog.log import read_log

# bytes the log may still grow: run_started and training_started (its monitors record) fit, the step-0 evaluation's
# event does not
ROOM = 2800


def _limited(limit: int):
    def apply():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead of killing
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def test_an_append_that_runs_out_of_space_cuts_its_partial_line_and_the_run_then_completes_exactly(
    tmp_path, completed_run
):
    root = make_workspace(tmp_path)
    assert rc1_here(root, "advance", "--until", "R2_PASSED").returncode == 0
    log = root / "events/local.jsonl"
    before = len(events(root))
    failed = subprocess.run(
        [sys.executable, "-m", "rc1", "train", "--config", "configs/short.yaml"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=PATIENCE,
        preexec_fn=_limited(log.stat().st_size + ROOM),
        # No .pyc writes: a byte-code cache cut short by the limit would break the next import.
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert failed.returncode == 1, failed.stderr[-2000:]
    assert (
        "no space to append an event (File too large)" in failed.stderr
        and "MiB free on the filesystem of" in failed.stderr
    )
    assert "Traceback" not in failed.stderr
    contents = read_log(log)
    assert not contents.torn and not contents.chain_breaks  # no partial line: nothing for `rc1 repair` to clear
    written = [e["type"] for e in events(root)][before:]
    assert written[:2] == ["run_started", "training_started"] and "eval_completed" not in written
    assert rc1_here(root, "audit").returncode == 0

    resumed = rc1_here(root, "advance", "--all")
    assert resumed.returncode == 0, resumed.stderr
    keys = ("step", "loss", "kl", "ratio", "lr", "reward", "reward_std", "tokens")

    def steps(root):
        return [tuple(e[k] for k in keys) for e in events(root) if e["type"] == "train_step"]

    assert steps(root) == steps(completed_run)  # the same 12 steps as the run that never ran out of space
    assert rc1_here(root, "audit").returncode == 0
