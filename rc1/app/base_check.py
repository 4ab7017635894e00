"""Whether the base a LoRA line trained over is still the base the run loads: its sampled frozen tensors, with the
line's newest checkpoint's adapter put on it as training wrapped it (rc1/train/frozen_base.py), held to the line's
first record (`training_started.frozen_sha256`). `rc1 export` refuses an adapter over a base that moved; `rc1 audit`
reports it as a finding, per line.

LoRA lines only: a QLoRA line recorded its 4-bit weights, which an unquantized load does not give back; a full
fine-tune has no frozen base; a line from before the record has none. A base that cannot be loaded here (a hub model
not in the local cache, a built-in model this workspace never built) is a note: not checked, and why."""

from __future__ import annotations

from pathlib import Path

import msgspec

from rc1.core.errors import BadInput
from rc1.core.workspace import Workspace
from rc1.eventlog.audit import Finding
from rc1.run import events as ev
from rc1.run.monitors.rules.frozen_base import moved

CHECK = "frozen_base"


class LineBase(msgspec.Struct, frozen=True, kw_only=True):
    """One line's first record of its frozen base and its newest checkpoint."""

    seed: int | None
    started_seq: int
    dtype: str
    first: dict[str, str]
    checkpoint: str | None = None


def lines_with_a_frozen_base(events: list[ev.Event]) -> list[LineBase]:
    """Each line (by seed) that recorded a frozen base, with its newest checkpoint, in the order the lines started."""
    lines: dict[int | None, LineBase] = {}
    seed = None
    for event in events:
        if isinstance(event, ev.TrainingStarted):
            seed = event.seed
            if seed not in lines and event.frozen_sha256 is not msgspec.UNSET and event.frozen_sha256:
                lines[seed] = LineBase(
                    seed=seed, started_seq=event.seq, dtype=event.dtype, first=dict(event.frozen_sha256)
                )
        elif isinstance(event, ev.CheckpointSaved) and seed in lines:
            lines[seed] = msgspec.structs.replace(lines[seed], checkpoint=event.dir)
    return list(lines.values())


def moved_base_message(checkpoint: str | Path, names: list[str]) -> str:
    return (
        f"{checkpoint}: its adapter was trained over a base whose sampled tensors hash otherwise than the base "
        f"loaded now ({len(names)} differ: {', '.join(names[:3])}); the model it names changed since the line "
        "started"
    )


def audit_bases(ws: Workspace, loaded) -> tuple[list[Finding], list[Finding]]:
    """(findings, notes): a finding per LoRA line whose base moved; a note per line that could not be checked."""
    if loaded.config.finetune.method != "lora":
        return [], []
    from rc1.eventlog.log import read_log

    lines = [line for line in lines_with_a_frozen_base(read_log(ws.log_path).events) if line.checkpoint is not None]
    if not lines:
        return [], []
    from rc1.app.policy import built_base_source

    source = built_base_source(ws, loaded, loaded.config.run.seed)
    if source is None:
        note = "not checked: the built-in base model was never built in this workspace (data/models)"
        return [], [Finding(check=CHECK, seq=line.started_seq, message=note) for line in lines]
    import torch

    from rc1.train.export import load_base
    from rc1.train.frozen_base import frozen_sha256_under

    dtype = lines[0].dtype if lines[0].dtype in ("float32", "bfloat16", "float16") else "float32"
    try:
        base, _ = load_base(source, getattr(torch, dtype))
    except BadInput as e:
        return [], [Finding(check=CHECK, seq=line.started_seq, message=f"not checked: {e}") for line in lines]
    findings = []
    for line in lines:
        names = moved(line.first, frozen_sha256_under(base, ws.root / line.checkpoint))
        if names:
            message = moved_base_message(line.checkpoint, names)
            findings.append(Finding(check=CHECK, seq=line.started_seq, message=message))
    return findings, []
