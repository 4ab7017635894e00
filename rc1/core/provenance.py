"""Who and what ran a command: recorded in run_started so an audit knows the environment."""

from __future__ import annotations

import importlib.metadata
import platform
import socket
import subprocess
from pathlib import Path

import rc1

PACKAGES = ("torch", "transformers", "trl", "peft", "datasets", "msgspec", "transitions", "structlog", "pyyaml")


def package_versions() -> dict[str, str]:
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = "absent"
    return versions


def code_version() -> str:
    """Package version plus the git commit of the source tree, with `+dirty` for uncommitted edits."""
    source = Path(rc1.__file__).resolve().parent.parent
    try:
        commit = subprocess.run(
            ["git", "-C", str(source), "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True, timeout=5
        )
        if commit.returncode != 0:
            return rc1.__version__
        dirty = subprocess.run(
            ["git", "-C", str(source), "status", "--porcelain", "--untracked-files=no", "rc1"],
            capture_output=True,
            text=True,
            timeout=5,
        )
        suffix = "+dirty" if dirty.stdout.strip() else ""
        return f"{rc1.__version__}+g{commit.stdout.strip()}{suffix}"
    except (OSError, subprocess.TimeoutExpired):
        return rc1.__version__


def host() -> str:
    return f"{socket.gethostname()} ({platform.platform()})"


def python_version() -> str:
    return platform.python_version()
