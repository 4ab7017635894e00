"""What CUDA reads from the environment once per process, set before anything can touch it.

cuBLAS picks its reduction order per call unless its workspace is fixed; torch's deterministic mode refuses matmuls
without one of the two settings it accepts (`:4096:8`, `:16:8`), and cuBLAS reads the variable at its first call in
the process, so the CLI sets it first (rc1/cli/main.py) and `train.deterministic` checks it (rc1/train/device.py).
`:4096:8` is 8 buffers of 4 MiB on the GPU; nothing on a CPU."""

from __future__ import annotations

import os

CUBLAS_WORKSPACE = ":4096:8"
DETERMINISTIC_WORKSPACES = (":4096:8", ":16:8")


def fix_cublas_workspace() -> None:
    """Set cuBLAS's workspace unless the environment already chose one."""
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", CUBLAS_WORKSPACE)
