"""A content-addressed cache of judge answers on disk (`scorer.cache: true`).

The key is the sha256 of (provider, model, rubric sha256, prompt, reply): the same question asked of
the same judge under the same rubric. Entries are written whole (temp file, fsync, rename). The cache
only ever answers what was asked; a probe bypasses it so that its calls are real.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from rc1.core.fsutil import atomic_write_text


def request_key(provider: str, model: str, rubric_sha256: str, messages: list[dict[str, str]]) -> str:
    payload = json.dumps([provider, model, rubric_sha256, messages], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class JudgeCache:
    def __init__(self, root: Path):
        self.root = Path(root)

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.txt"

    def get(self, key: str) -> str | None:
        try:
            return self._path(key).read_text(encoding="utf-8")
        except FileNotFoundError:
            return None

    def put(self, key: str, answer: str) -> None:
        atomic_write_text(self._path(key), answer)
