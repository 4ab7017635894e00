"""`python -m rc1.bench`'s flags are parsed, not searched for: `--help` prints them and starts nothing, an unknown
flag is refused (exit 2) before any part runs, and each part has its `--<part>-only`."""

import subprocess
import sys
from pathlib import Path

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


def test_every_python_m_entry_prints_its_usage_for_help_and_starts_nothing():
    """Every module of rc1 that runs as `python -m` (a package's __main__.py, or a module with a `__main__` guard: a new
    one is held to this too)
    parses its flags with argparse: `--help` prints a usage line and exits 0."""
    root = Path(__file__).resolve().parents[2]
    entries = sorted(
        ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__main__")
        for path in (root / "rc1").rglob("*.py")
        if path.name == "__main__.py" or 'if __name__ == "__main__"' in path.read_text()
    )
    assert {"rc1", "rc1.bench", "rc1.bench.live_arms"} <= set(entries)
    running = {
        name: subprocess.Popen(
            [sys.executable, "-m", name, "--help"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for name in entries
    }
    for name, process in running.items():
        out, err = process.communicate(timeout=600)
        assert process.returncode == 0 and out.startswith("usage:"), (
            f"python -m {name} --help: {out[-500:]}{err[-2000:]}"
        )
