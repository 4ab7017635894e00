"""`make wheels DIR=…`: the wheels an offline CUDA node needs to run rc1 beyond what a CUDA PyTorch image has.

What rc1 needs: its requirements with its `qlora` extra (bitsandbytes), from pyproject.toml, and theirs, read off this
environment's installed distributions (`importlib.metadata`) in the versions installed here (the ones rc1 is tested
with). torch and everything torch itself requires (the image's: triton, the nvidia-* runtime, sympy, networkx, jinja2,
…) are left out, and so is every name in `--have` (a file of the image's package names, one per line, `pip list --format
freeze` or bare names): what remains is downloaded with `pip download --no-deps --only-binary=:all:` for the node's
Python and platform (manylinux x86_64, CPython `--python-version`). On the node: `python3 -m pip install --no-index
--no-deps --target DIR2 DIR/*.whl` and `PYTHONPATH=DIR2`, or `make gpu-check WHEELS=DIR`.

Requirements are checked, not assumed: where `--have` gives the image's versions (`name==version` lines), every
carried wheel's `Requires-Dist` on a package the image provides must accept the image's version, else nothing is
downloaded and the exit is 3, naming the package, its requirement and the image's version (pip installs the wheels
with `--no-deps` on the node, so nothing there would notice). Exit 0 with the sizes printed, 1 when pip could not
fetch one (it names which), 3 when a requirement is not met."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

from rc1.core.errors import BadInput
from rc1.core.fsutil import read_input_text

# The platforms an x86-64 Linux node takes wheels for: pip matches each tag exactly (bitsandbytes 0.50: 2_24).
PLATFORMS = tuple(f"manylinux_2_{n}_x86_64" for n in (17, 24, 27, 28, 31, 34, 35)) + ("manylinux2014_x86_64",)


PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def closure(roots: list[Requirement], python_version: str) -> dict[str, str]:
    """Installed distributions `roots` need, transitively: canonical name -> installed version. A requirement whose
    marker is false on the node's Python (`python_version`) or that is not installed here is left out."""
    environment = {"python_version": python_version, "python_full_version": f"{python_version}.0", "extra": ""}
    found: dict[str, str] = {}
    pending = list(roots)
    while pending:
        requirement = pending.pop()
        if requirement.marker is not None and not requirement.marker.evaluate(environment):
            continue
        name = canonical(requirement.name)
        if name in found:
            continue
        try:
            found[name] = metadata.version(requirement.name)
        except metadata.PackageNotFoundError:
            continue
        pending += [Requirement(r) for r in metadata.requires(requirement.name) or []]
    return found


def rc1_requirements(pyproject: Path = PYPROJECT) -> list[Requirement]:
    """rc1's requirements with its `qlora` extra (bitsandbytes), read from pyproject.toml: the one place they are
    declared, present wherever rc1 runs from its tree (on the device rc1 is not installed, so it has no metadata)."""
    import tomllib

    project = tomllib.loads(read_input_text(pyproject, "rc1's project file"))["project"]
    return [
        Requirement(r)
        for r in project.get("dependencies", []) + project.get("optional-dependencies", {}).get("qlora", [])
    ]


def unmet_here(roots: list[Requirement]) -> list[str]:
    """Every requirement, from `roots` through the installed distributions they lead to, that this Python's installed
    version does not satisfy (or that is not installed): what a node whose packages came with `--no-deps` never
    checked. Markers are evaluated here; extras are not followed."""
    problems, seen, queue = [], set(), [("rc1", r) for r in roots]
    while queue:
        wanted_by, requirement = queue.pop(0)
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        name = canonical(requirement.name)
        try:
            installed = metadata.version(requirement.name)
        except metadata.PackageNotFoundError:
            problems.append(f"{wanted_by} requires {requirement}, which is not installed")
            continue
        if not requirement.specifier.contains(installed, prereleases=True):
            problems.append(f"{wanted_by} requires {requirement.name}{requirement.specifier}, installed {installed}")
        if name in seen:
            continue
        seen.add(name)
        queue += [(f"{name} {installed}", Requirement(text)) for text in metadata.requires(requirement.name) or []]
    return problems


def needed(python_version: str, have: set[str]) -> dict[str, str]:
    roots = rc1_requirements()
    image = closure([Requirement("torch")], python_version)
    return {
        name: version
        for name, version in sorted(closure(roots, python_version).items())
        if name not in image and name not in have and not name.startswith("nvidia-")
    }


def image_versions(text: str) -> dict[str, str | None]:
    """A `--have` file's packages: canonical name -> version (`name==version`), or None for a bare name."""
    found: dict[str, str | None] = {}
    for line in text.splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, _, version = line.partition("==")
            found[canonical(re.split(r"[<> ;\[]", name.strip())[0])] = version.strip() or None
    return found


def unmet(carried: dict[str, str], image: dict[str, str | None], python_version: str) -> list[str]:
    """Each carried package's requirements on the image's packages that the image's version does not satisfy."""
    environment = {"python_version": python_version, "python_full_version": f"{python_version}.0", "extra": ""}
    problems = []
    for name in carried:
        for text in metadata.requires(name) or []:
            requirement = Requirement(text)
            if requirement.marker is not None and not requirement.marker.evaluate(environment):
                continue
            provided = image.get(canonical(requirement.name))
            if provided is not None and canonical(requirement.name) not in carried:
                if not requirement.specifier.contains(provided, prereleases=True):
                    problems.append(
                        f"{name} {carried[name]} requires {requirement.name}{requirement.specifier}, "
                        f"the image has {requirement.name} {provided}"
                    )
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rc1.bench.wheels", description=__doc__.splitlines()[0])
    parser.add_argument("--dir", required=True, type=Path, help="where the wheels go")
    parser.add_argument("--python-version", default="3.12", help="the node's Python, major.minor (default 3.12)")
    parser.add_argument("--have", type=Path, help="a file of the packages the node's image has already")
    args = parser.parse_args(argv)
    image: dict[str, str | None] = {}
    if args.have is not None:
        try:
            image = image_versions(read_input_text(args.have, "the image's package list"))
        except BadInput as error:
            print(f"wheels: {error}", file=sys.stderr)
            return 2
    wanted = needed(args.python_version, set(image))
    problems = unmet(wanted, image, args.python_version)
    if problems:
        print("wheels: the image cannot take these wheels (nothing downloaded):", file=sys.stderr)
        for problem in problems:
            print(f"  {problem}", file=sys.stderr)
        return 3
    args.dir.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:", "-d", str(args.dir)]
    command += ["--python-version", args.python_version, "--implementation", "cp"]
    command += [option for platform in PLATFORMS for option in ("--platform", platform)]
    failed = []
    for name, version in wanted.items():
        if subprocess.run([*command, f"{name}=={version}"], capture_output=True, text=True).returncode != 0:
            failed.append(f"{name}=={version}")
    total = 0
    for wheel in sorted(args.dir.glob("*.whl")):
        total += wheel.stat().st_size
        print(f"{wheel.stat().st_size / 2**20:8.1f} MiB  {wheel.name}")
    print(f"{total / 2**20:8.1f} MiB  in {args.dir} ({len(wanted)} packages beyond the image)")
    if failed:
        print(f"wheels: pip found no wheel for {', '.join(failed)} on {args.python_version}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
