"""sha256 of every line of a log file, for the chain check of a big log, run as a separate process.

A full verification decodes every line (msgspec, one core) and hashes every line (hashlib, which keeps the
GIL for lines this short). The two are independent, so on a machine with a second core the hashing runs
here, beside the decode, and hands back each line's hex digest. Standard library only: it runs as a script,
`python -S line_digests.py LOG SIZE`, and writes the digests of the lines in the first SIZE bytes to stdout.
"""

from __future__ import annotations

import hashlib
import sys


def line_digests(data: bytes) -> bytes:
    """The sha256 digest of each newline-terminated line of `data` (newline excluded), 32 bytes each,
    concatenated; `.hex()` of it is the lines' chain hashes, joined."""
    view, sha, find = memoryview(data), hashlib.sha256, data.find
    out = bytearray()
    start = 0
    while True:
        end = find(b"\n", start)
        if end < 0:
            return bytes(out)
        out += sha(view[start:end]).digest()
        start = end + 1


def main(argv: list[str] | None = None) -> int:
    """Writes the number of bytes its lines cover (a decimal line), then their raw digests."""
    import argparse

    parser = argparse.ArgumentParser(prog="line_digests.py", description=__doc__.splitlines()[0])
    parser.add_argument("path", help="the log file")
    parser.add_argument("size", type=int, help="hash the lines that end within the first SIZE bytes")
    args = parser.parse_args(argv)
    path, size = args.path, args.size
    with open(path, "rb") as fh:
        data = fh.read(size)
    covered = data.rfind(b"\n") + 1
    out = sys.stdout.buffer
    out.write(f"{covered}\n".encode())
    out.write(line_digests(data))  # the bytes after the last newline are no line: never hashed
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
