"""Resource check: enough free disk where the run writes (checkpoints, logs, data)."""

from __future__ import annotations

import shutil
from pathlib import Path

from rc1.checks.result import CheckResult


def free_disk(path: Path, min_free_gb: float) -> CheckResult:
    """Free space on the filesystem that holds `path`, measured at its nearest existing ancestor (the
    run may not have created `path` yet)."""
    path = Path(path).absolute()
    probe = next(p for p in (path, *path.parents) if p.exists())
    free_gb = shutil.disk_usage(probe).free / 1e9
    return CheckResult(
        name="free_disk",
        passed=free_gb >= min_free_gb,
        measured={"free_gb": free_gb},
        thresholds={"min_free_gb": min_free_gb},
        detail=f"{free_gb:.1f} GB free at {probe} (need {min_free_gb:g} GB)",
    )
