"""A multi-process launch (torchrun: two CPU processes on gloo; `accelerate launch` sets the same RANK and
WORLD_SIZE on GPUs, but runs a single process on CPUs): only rank 0 takes the lock and writes the log,
publishes checkpoints and evaluates; the other rank trains its share and never touches the log."""

import json
import os
import subprocess
import sys

from conftest import REPO, events, make_workspace, rc1_here


def test_under_a_multi_process_launch_only_rank_0_writes_and_the_run_completes_and_audits(tmp_path):
    root = make_workspace(tmp_path, **{"train.max_steps": 2, "train.save_steps": 2, "train.eval_steps": 2})
    gated = rc1_here(root, "advance", "--until", "R2_PASSED")
    assert gated.returncode == 0, gated.stderr
    launch = subprocess.run(
        # --standalone: the rendezvous takes a free port itself (no window for another process to take it).
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
         "-m", "rc1", "train", "--config", "configs/short.yaml"],
        cwd=root, capture_output=True, text=True, timeout=600,
        env={**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"},
    )
    why = [line for line in launch.stderr.splitlines() if any(w in line for w in ("Error", "FATAL", "error:", "Traceback"))]
    assert launch.returncode == 0, "\n".join(why[:40]) + "\n...\n" + launch.stderr[-2000:]
    log = events(root)
    assert [e["type"] for e in log].count("training_started") == 1
    steps = [e for e in log if e["type"] == "train_step"]
    assert [e["step"] for e in steps] == [1, 2]  # once each: rank 1 appended nothing
    # A step trains both ranks' prompts: 4 prompts per rank, 4 replies each.
    assert all(sum(e["batch_difficulty"].values()) == 8 for e in steps)
    final = root / "checkpoints/local/step_00002"
    assert (final / "rng.pt").is_file() and (final / "rng_state_1.pth").is_file()  # each rank's RNG, published
    assert [e["type"] for e in log][-1] == "run_completed"
    assert rc1_here(root, "audit").returncode == 0


def test_commands_other_than_train_refuse_a_multi_process_launch(tmp_path):
    root = make_workspace(tmp_path)
    refused = rc1_here(root, "status", env={"WORLD_SIZE": "2", "RANK": "1"})
    assert refused.returncode == 2
    assert "only `rc1 train` runs (rank 1 of 2)" in refused.stderr and "advance --until R2_PASSED" in refused.stderr
    assert not (root / "events/local.jsonl").exists()
