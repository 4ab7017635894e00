"""What a command that writes a report does with it (`rc1 calibrate`, `rc1 ablate`): the report's JSON written whole
under the run's reports folder, then shown, as JSON on stdout (`--json`: the note on stderr, so stdout is the report
alone) or as the command's text."""

from __future__ import annotations

import sys
from pathlib import Path

import msgspec

from rc1.core.fsutil import atomic_write_bytes


def write_and_show(path: Path, root: Path, report: msgspec.Struct, text: str, as_json: bool) -> None:
    encoded = msgspec.json.encode(report)
    atomic_write_bytes(path, msgspec.json.format(encoded, indent=2) + b"\n")
    print(encoded.decode() if as_json else text)
    shown = path.relative_to(root) if path.is_relative_to(root) else path
    print(f"wrote {shown}", file=sys.stderr if as_json else sys.stdout)
