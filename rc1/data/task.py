"""The one record type every pool and shadow set is made of."""

from __future__ import annotations

from typing import Literal

import msgspec

Difficulty = Literal["easy", "medium", "hard"]


class TaskItem(msgspec.Struct, frozen=True, kw_only=True):
    id: str  # stable across runs with the same seed, e.g. "gsm8k-000017"
    task: Literal["gsm8k", "hotpotqa", "strategyqa"]
    question: str
    context: str = ""  # supporting paragraphs (HotpotQA-style); empty otherwise
    answer: str  # gold answer: a number, a short span, or "yes"/"no"
    difficulty: Difficulty
    prompt: str  # exactly what the policy is shown
    needs_clarification: bool = False
    source: str = "builtin"  # "builtin" or the file it was loaded from


def write_items(path, items: list[TaskItem]) -> None:
    """Write JSONL atomically (temp file, fsync, rename) so a pool is never half-written."""
    from rc1.fsutil import atomic_write_bytes

    encoder = msgspec.json.Encoder()
    atomic_write_bytes(path, b"".join(encoder.encode(item) + b"\n" for item in items))


def read_items(path) -> list[TaskItem]:
    from rc1.errors import BadInput

    decoder = msgspec.json.Decoder(TaskItem)
    items = []
    with open(path, "rb") as fh:
        for lineno, line in enumerate(fh, 1):
            try:
                items.append(decoder.decode(line))
            except msgspec.DecodeError as e:
                raise BadInput(f"{path}:{lineno}: not a task item: {e}") from None
    return items
