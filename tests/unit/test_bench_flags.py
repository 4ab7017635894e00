"""`python -m rc1.bench`'s flags are parsed, not searched for: `--help` prints them and starts nothing, an unknown
flag is refused (exit 2) before any part runs, and each part has its `--<part>-only`."""

import subprocess
import sys

from rc1.bench.main import PARTS


def bench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rc1.bench", *args], capture_output=True, text=True, timeout=600)


def test_help_lists_every_part_and_runs_none():
    shown = bench("--help")
    assert shown.returncode == 0 and shown.stderr == ""
    assert all(f"--{name}-only" in shown.stdout for name in PARTS)


def test_an_unknown_flag_or_two_parts_are_refused_before_anything_runs():
    unknown = bench("--live-arms-onyl")
    assert unknown.returncode == 2 and "unrecognized arguments: --live-arms-onyl" in unknown.stderr
    both = bench("--arms-only", "--monitors-only")
    assert both.returncode == 2 and "not allowed with argument" in both.stderr
