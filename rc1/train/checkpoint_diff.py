"""A checkpoint trained again compared with the one the log vouches for: file by file by sha256 and, where a file
differs, tensor by tensor (weights, optimizer moments, scheduler, RNG and strategy state), so a mismatch names the
first tensor that differs and by how much.

Two files are not compared as bytes: `rc1_meta.json` records the log's head when the checkpoint was published (a
retrain publishes nothing), and the trl engine's `trainer_state.json` logs each step's wall-clock time and, for
SFT, a token count that starts again with each segment; it is compared without them (UNCOMPUTED_KEYS).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import msgspec
import torch

from rc1.core.fsutil import sha256_file
from rc1.train.checkpoints import META_NAME
from rc1.train.layout import TRAINER_STATE

# Entries of trainer_state.json's log that are not what the steps computed: wall-clock times, and `num_tokens`, which
# TRL 1.16's SFTTrainer counts from its own start (`_total_train_tokens = 0` in `__init__`, never checkpointed), so a
# resumed segment counts again from 0. (GRPO's and RLOO's log the trainer state's `num_input_tokens_seen`, which the
# state holds and is compared.)
UNCOMPUTED_KEYS = ("step_time", "train_runtime", "train_samples_per_second", "train_steps_per_second", "num_tokens")


class TensorDifference(msgspec.Struct, frozen=True, kw_only=True):
    name: str  # its key in the file (nested keys joined by dots: state.0.exp_avg; log_history.5.loss)
    max_abs: float  # the largest |retrained - recorded| (nan: not numbers, or absent from one of them)
    max_rel: float  # max_abs over the recorded tensor's largest magnitude


class FileDifference(msgspec.Struct, frozen=True, kw_only=True):
    file: str
    recorded_sha256: str
    retrained_sha256: str | None  # None: the retrain did not write it
    tensors: list[TensorDifference] = msgspec.field(default_factory=list)  # in the file's order; [] for other files
    tensors_compared: int = 0


class CheckpointComparison(msgspec.Struct, frozen=True, kw_only=True):
    dir: str  # the recorded checkpoint, relative to the workspace
    step: int
    equal: list[str]  # files equal to the recorded ones (trainer_state.json: but for its times)
    differing: list[FileDifference]

    @property
    def same(self) -> bool:
        return not self.differing


def compare_checkpoint(
    retrained: Path, recorded: Path, files: dict[str, str], dir: str, step: int
) -> CheckpointComparison:
    """`retrained` (a staged checkpoint) against the files `recorded` holds as the log vouches for them (`files`:
    relative path -> sha256). The recorded folder's files are read only where their sha256 is the recorded one."""
    equal, differing = [], []
    for name, recorded_sha in sorted(files.items()):
        if name == META_NAME:
            continue
        mine = retrained / name
        mine_sha = sha256_file(mine) if mine.is_file() else None
        if name == TRAINER_STATE and mine_sha is not None and _recorded_intact(recorded / name, recorded_sha):
            if _untimed(mine) == _untimed(recorded / name):
                equal.append(name)
                continue
        elif mine_sha == recorded_sha:
            equal.append(name)
            continue
        tensors, compared = [], 0
        if mine_sha is not None and _recorded_intact(recorded / name, recorded_sha):
            if name == TRAINER_STATE:  # its log's entries, key by key
                tensors, compared = _differences(_flat(_untimed(mine)), _flat(_untimed(recorded / name)))
            elif _holds_tensors(name):
                tensors, compared = tensor_differences(mine, recorded / name)
        differing.append(
            FileDifference(
                file=name,
                recorded_sha256=recorded_sha,
                retrained_sha256=mine_sha,
                tensors=tensors,
                tensors_compared=compared,
            )
        )
    return CheckpointComparison(dir=dir, step=step, equal=equal, differing=differing)


def tensor_differences(retrained: Path, recorded: Path) -> tuple[list[TensorDifference], int]:
    """Every entry of two tensor files that differs, in the recorded file's order, and how many were compared."""
    return _differences(_flat(_load(retrained)), _flat(_load(recorded)))


def _differences(mine: dict, theirs: dict) -> tuple[list[TensorDifference], int]:
    found = []
    for name in list(theirs) + [n for n in mine if n not in theirs]:
        a, b = mine.get(name), theirs.get(name)
        difference = _difference(a, b)
        if difference is not None:
            found.append(TensorDifference(name=name, max_abs=difference[0], max_rel=difference[1]))
    return found, len(set(mine) | set(theirs))


def _difference(a, b) -> tuple[float, float] | None:
    """(max abs, max rel) where `a` and `b` differ; None where they are equal (bit for bit, for tensors)."""
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        if a.shape == b.shape and a.dtype == b.dtype and torch.equal(a, b):
            return None
        if a.shape != b.shape or a.is_complex() or b.is_complex():
            return math.nan, math.nan
        delta = (a.double() - b.double()).abs()
        largest = float(delta.max()) if delta.numel() else 0.0
        scale = float(b.double().abs().max()) if b.numel() else 0.0
        return largest, largest / scale if scale else math.inf if largest else 0.0
    if type(a) is type(b) and a == b:
        return None
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        largest = abs(float(a) - float(b))
        return largest, largest / abs(float(b)) if b else math.inf
    return math.nan, math.nan


def _load(path: Path) -> dict:
    if path.suffix == ".safetensors":
        from safetensors.torch import load_file

        return load_file(path)
    # python's and numpy's RNG states are not tensors (rng.pt); the file is rc1's, and its sha256 the log's
    return torch.load(path, map_location="cpu", weights_only=False)


def _flat(value, prefix: str = "") -> dict:
    """Nested dicts, lists and tuples as one level of dotted keys; numpy arrays as tensors."""
    if isinstance(value, dict):
        return {k: v for key, item in value.items() for k, v in _flat(item, f"{prefix}{key}.").items()}
    if isinstance(value, (list, tuple)) and not all(isinstance(x, (int, float)) for x in value):
        return {k: v for i, item in enumerate(value) for k, v in _flat(item, f"{prefix}{i}.").items()}
    if type(value).__module__ == "numpy" and hasattr(value, "shape"):
        value = torch.as_tensor(value)
    return {prefix.rstrip("."): value}


def _holds_tensors(name: str) -> bool:
    return name.endswith((".safetensors", ".pt", ".pth", ".bin"))


def _recorded_intact(path: Path, sha: str) -> bool:
    return path.is_file() and sha256_file(path) == sha


def _untimed(path: Path):
    """trainer_state.json without what its log holds that the steps did not compute (UNCOMPUTED_KEYS)."""
    state = json.loads(path.read_text(encoding="utf-8"))
    for entry in state.get("log_history", []):
        for key in UNCOMPUTED_KEYS:
            entry.pop(key, None)
    return state
