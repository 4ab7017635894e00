"""`make gpu-rehearsal`: the device's library versions, overlaid on this environment, for `make gpu-check --dry-run`.

The GPU image holds its own transformers, huggingface-hub, tokenizers, numpy, … (configs/images/h200.txt, the
versions its device notes list), and `make wheels` carries only what it lacks, so on the device rc1 runs against
the image's versions, not the ones the suite runs here. This installs, into `--site` (`pip install --no-deps
--target`, as the device installs the carried wheels), every package of rc1's installed dependency closure whose
image version differs from the one here; `PYTHONPATH=<site>` then puts them first. An import or an API that
transformers 5.17 lacks breaks here, in the dry run, before a device session is spent on it.

Left as they are here (said, not hidden): torch (the image's 2.11 is a CUDA build; this machine keeps its CPU
2.13), the Python (3.12 there), and every package whose version the image list does not give (peft, pyarrow,
fsspec, pandas there), and a version pip cannot install for this Python (numpy 2.5 needs 3.12): each is printed.
Exit 0 with what was overlaid and what was kept printed; the dry run after it is the check.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from rc1.bench.wheels import closure, image_versions, rc1_requirements
from rc1.core.errors import BadInput
from rc1.core.fsutil import read_input_text

KEPT = frozenset({"torch"})  # the image's is a CUDA build; see the docstring


def overlay(image: dict[str, str | None], python_version: str) -> dict[str, tuple[str, str]]:
    """rc1's dependencies whose image version differs from the installed one: name -> (here, image)."""
    installed = closure(rc1_requirements(), python_version)
    return {
        name: (here, image[name])
        for name, here in sorted(installed.items())
        if image.get(name) and image[name] != here and name not in KEPT
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rc1.bench.rehearsal", description=__doc__.splitlines()[0])
    parser.add_argument("--image", type=Path, required=True, help="the image's packages, name==version lines")
    parser.add_argument("--site", type=Path, required=True, help="the folder to install the image's versions into")
    args = parser.parse_args(argv)
    try:
        image = image_versions(read_input_text(args.image, "the image's package list"))
    except BadInput as error:
        print(f"gpu-rehearsal: {error}", file=sys.stderr)
        return 2
    versions = f"{sys.version_info.major}.{sys.version_info.minor}"
    chosen = overlay(image, versions)
    command = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--upgrade", "--target", str(args.site)]
    for name, (here, there) in chosen.items():
        installed = subprocess.run([*command, f"{name}=={there}"], capture_output=True, text=True, check=False)
        if installed.returncode == 0:
            print(f"gpu-rehearsal: {name} {here} -> {there} (the image's)")
        else:  # e.g. numpy 2.5 needs Python 3.12: kept, and said
            reason = (installed.stderr.strip().splitlines() or ["pip failed"])[-1]
            print(f"gpu-rehearsal: {name} kept at {here}: the image's {there} does not install here ({reason})")
    print(f"gpu-rehearsal: kept as here: torch {metadata.version('torch')}, Python {versions}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
