"""What CUDA reads from the environment once per process, set before anything can touch it.

cuBLAS picks its reduction order per call unless its workspace is fixed, and reads the variable at its first call in
the process, so the CLI sets it first (rc1/cli/main.py) and `train.deterministic` checks it (rc1/train/device.py).
torch up to 2.10 refused deterministic matmuls without one of `:4096:8`, `:16:8`; torch 2.11 (the H200 image's) no
longer documents or checks that (its `use_deterministic_algorithms` docstring and libraries, read for issue 51;
pytorch#161749), so the check is rc1's own choice now, kept because a fixed workspace costs 32 MiB and an older torch
needs it. `:4096:8` is 8 buffers of 4 MiB on the GPU; nothing on a CPU."""

from __future__ import annotations

import os

CUBLAS_WORKSPACE = ":4096:8"
DETERMINISTIC_WORKSPACES = (":4096:8", ":16:8")


def fix_cublas_workspace() -> None:
    """Set cuBLAS's workspace unless the environment already chose one."""
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", CUBLAS_WORKSPACE)
