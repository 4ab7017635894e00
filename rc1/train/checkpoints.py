"""Publishing checkpoints: staged dir → fsynced → renamed into place → hashed. Whole or absent, never half.

The caller appends `checkpoint_saved` (with the hashes `publish` returns) and only then calls
`update_latest`: a checkpoint without its event does not exist, so a directory left by a crash between
the rename and the event is an orphan, which the next `publish` of the same step moves aside.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from rc1.core import failpoints
from rc1.core.fsutil import fsync_dir, fsync_tree, hash_tree, sha256_file

META_NAME = "rc1_meta.json"
LATEST_NAME = "latest"


def publish(staged: Path, final: Path, meta: dict) -> dict[str, str]:
    """Write `rc1_meta.json` into `staged`, make it durable, rename it to `final`; return its file hashes."""
    staged, final = Path(staged), Path(final)
    (staged / META_NAME).write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    fsync_tree(staged)
    final.parent.mkdir(parents=True, exist_ok=True)
    if final.exists():
        _remove_aside(final)
    failpoints.reached("publish")
    os.rename(staged, final)
    fsync_dir(final.parent)
    if staged.parent != final.parent:
        fsync_dir(staged.parent)
    return hash_tree(final)


def update_latest(checkpoints_dir: Path, final: Path) -> None:
    """Atomically point `checkpoints_dir/latest` at `final` (a relative link when `final` lives there)."""
    checkpoints_dir, final = Path(checkpoints_dir), Path(final)
    target = final.name if final.parent.resolve() == checkpoints_dir.resolve() else str(final.resolve())
    tmp = checkpoints_dir / f".{LATEST_NAME}.tmp-{os.getpid()}"
    if tmp.is_symlink() or tmp.exists():
        tmp.unlink()
    os.symlink(target, tmp)
    os.replace(tmp, checkpoints_dir / LATEST_NAME)
    fsync_dir(checkpoints_dir)


def verify(dir: Path, files: dict[str, str]) -> list[str]:
    """Problems found comparing `dir` with its recorded hashes (missing file, sha256 mismatch); [] if intact.

    Extra files are not problems: the record lists what was published, not what may be added next to it.
    """
    dir = Path(dir)
    if not dir.is_dir():
        return [f"{dir}: checkpoint directory is missing"]
    problems = []
    for rel, expected in sorted(files.items()):
        path = dir / rel
        if not path.is_file():
            problems.append(f"{path}: missing (recorded sha256 {expected[:12]}…)")
            continue
        actual = sha256_file(path)
        if actual != expected:
            problems.append(f"{path}: sha256 mismatch (recorded {expected[:12]}…, found {actual[:12]}…)")
    return problems


def promote_best(src: Path, best_dir: Path) -> dict[str, str]:
    """Copy `src` to `best_dir` (a new folder under best/: earlier bests are kept) whole: a temp sibling,
    fsynced, renamed. Returns the sha256 of every file of the copy."""
    src, best_dir = Path(src), Path(best_dir)
    best_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = best_dir.with_name(f".{best_dir.name}.tmp-{os.getpid()}")
    if tmp.exists():
        shutil.rmtree(tmp)
    shutil.copytree(src, tmp, symlinks=True)
    fsync_tree(tmp)
    if best_dir.exists():  # a copy left by a run killed after the rename, before its event: it never existed
        _remove_aside(best_dir)
    os.rename(tmp, best_dir)
    fsync_dir(best_dir.parent)
    return hash_tree(best_dir)


def _remove_aside(path: Path) -> None:
    """Move an orphan out of the way first (a rename is atomic, a delete is not), then delete it."""
    n = 0
    while (aside := path.with_name(f".{path.name}.orphan-{n}")).exists():
        n += 1
    os.rename(path, aside)
    fsync_dir(path.parent)
    shutil.rmtree(aside)
