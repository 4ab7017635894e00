"""`python -m rc1.reader build|check`: build the built-in reader, check the shipped one is rebuilt bit for bit.

- `build [--out DIR] [--state DIR]` (`make reader`): trains the reader from scratch into DIR (default:
  rc1/reader/weights, the shipped folder) and prints the sha256 of the pinned files, which rc1/reader/shipped.py holds.
  With `--state`, its progress is kept there and a build stopped part-way goes on from it (rc1/reader/progress.py).
- `check` (`make reader-check`): builds it again in a temp folder and compares the pinned files with the shipped
  ones; exit 0 when every byte is equal, 3 naming the file that differs.
What it copies is measured by `python -m rc1.bench --copy-probe-only` (rc1/bench/copy_probe.py).
Exit codes as rc1's: 0 ok, 2 bad arguments, 3 a check that failed.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from rc1.core.fsutil import sha256_file


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rc1.reader", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    build = commands.add_parser("build", help="train the reader into --out (default: the shipped folder)")
    build.add_argument("--out", type=Path, default=None, help="folder to write (default rc1/reader/weights)")
    build.add_argument(
        "--state",
        type=Path,
        default=None,
        help="keep the build's progress in this folder every 100 steps, and go on from what it holds: a build "
        "stopped part-way ends in the same bytes as one that never stopped",
    )
    commands.add_parser("check", help="build again in a temp folder and compare with the shipped files")
    args = parser.parse_args(argv)
    if args.command == "build":
        return _build(args.out, args.state)
    return _check()


def _build(out: Path | None, state: Path | None = None) -> int:
    from rc1.reader.build import build_reader
    from rc1.reader.shipped import PINNED, WEIGHTS

    out = out or WEIGHTS
    record = build_reader(out, say=lambda line: print(line, flush=True), state=state)
    print(f"built {out} in {record.seconds:.0f} s (copy curriculum: {record.induction_steps} steps)")
    for name in PINNED:
        print(f'    "{name}": "{sha256_file(out / name)}",')
    return 0


def _check() -> int:
    from rc1.reader.build import build_reader
    from rc1.reader.shipped import PINNED

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "reader"
        build_reader(out, say=lambda line: print(line, flush=True))
        differ = [name for name, pinned in PINNED.items() if sha256_file(out / name) != pinned]
    if differ:
        print(f"reader-check: the rebuilt {', '.join(differ)} differ from the pinned sha256", file=sys.stderr)
        return 3
    print(f"reader-check: rebuilt bit for bit ({', '.join(PINNED)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
