"""Where a run's rollout archive is, read from its log: the training shard of every checkpoint and the shard of every
evaluation that the run's lines of training still stand on (a resume abandons what came after its checkpoint; an
invalidated gate, everything before it), each with the sha256 its event recorded."""

from __future__ import annotations

from pathlib import Path

import msgspec

from rc1.core.fsutil import sha256_file
from rc1.run import events as ev
from rc1.scoring.archive import SHARD_NAME, MalformedRow, Rollout, decode_shard


class Shard(msgspec.Struct, frozen=True, kw_only=True):
    kind: str  # train (a checkpoint's) | eval (an evaluation's)
    step: int
    seed: int | None  # the line of training
    path: str  # relative to the workspace root
    sha256: str
    seq: int  # the event that vouches for it


def archive_shards(events: list[ev.Event]) -> list[Shard]:
    lines: dict[int | None, dict[tuple[str, int], Shard]] = {}
    seed: int | None = None
    for event in events:
        if isinstance(event, ev.GateInvalidated):
            lines, seed = {}, None
        elif isinstance(event, ev.TrainingStarted):
            seed = event.seed
            kept = lines.get(seed, {})
            lines[seed] = {key: shard for key, shard in kept.items() if shard.step <= event.resume_from_step}
        elif isinstance(event, ev.CheckpointSaved) and SHARD_NAME in event.files:
            lines.setdefault(seed, {})[("train", event.step)] = Shard(
                kind="train",
                step=event.step,
                seed=seed,
                path=f"{event.dir}/{SHARD_NAME}",
                sha256=event.files[SHARD_NAME],
                seq=event.seq,
            )
        elif isinstance(event, ev.EvalCompleted):
            for path, sha in event.rollouts.items():
                lines.setdefault(seed, {})[("eval", event.step)] = Shard(
                    kind="eval", step=event.step, seed=seed, path=path, sha256=sha, seq=event.seq
                )
    return [shard for line in lines.values() for _, shard in sorted(line.items(), key=lambda kv: (kv[1].step, kv[0]))]


class ShardChanged(Exception):
    """A shard whose bytes are not the ones its event recorded (or that is missing)."""


class ShardUnreadable(ShardChanged):
    """A shard with a line that is not a row (read unverified, as `audit --rescore` reads one): its path, the line and
    the field."""


def read_shard(root: Path, shard: Shard, *, verify: bool = True) -> list[Rollout]:
    path = root / shard.path
    if not path.is_file():
        raise ShardChanged(f"{path}: missing (seq {shard.seq} vouches for it)")
    if verify and sha256_file(path) != shard.sha256:
        raise ShardChanged(f"{path}: sha256 differs from the one seq {shard.seq} recorded; see `rc1 audit`")
    try:
        return decode_shard(path.read_bytes())
    except MalformedRow as e:
        raise ShardUnreadable(f"{path}: {e}") from None
