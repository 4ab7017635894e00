"""Writing a gated input and recording it as an artifact_written event."""

from __future__ import annotations

from pathlib import Path

from rc1.app.session import Session
from rc1.core.fsutil import sha256_file
from rc1.data.task import TaskItem, write_items


def write_artifact(session: Session, path: Path, items: list[TaskItem], kind: str) -> None:
    write_items(path, items)
    session.append(
        session.run.write_artifact(str(path.relative_to(session.ws.root)), sha256_file(path), path.stat().st_size, kind)
    )


def write_held_out(session: Session, held) -> None:
    """The shadow set and the gate set (rc1.app.datasets.HeldOut), each with its manifest."""
    from rc1.app.datasets import write_manifest

    ws = session.ws
    for items, path, manifest, kind in (
        (held.shadow, ws.shadow_path, ws.shadow_manifest_path, "shadow"),
        (held.gate, ws.gate_path, ws.gate_manifest_path, "gate"),
    ):
        write_artifact(session, path, items, kind)
        write_manifest(session.config, path, manifest, items)
