"""A runbook entry: what a failed check or a tripped monitor usually means, and what to try, as data beside the
check or the rule it is about. A failed round and a tripped rule print it, `rc1 status` shows it for a halt, and the
the runbook of docs/monitors-and-runbook.md is generated from the same entries (rc1/views/runbook.py)."""

from __future__ import annotations

import msgspec


class Runbook(msgspec.Struct, frozen=True, kw_only=True):
    means: str  # what the failure usually means, one sentence
    tries: tuple[str, ...]  # what to try, most likely first; each names the key or command to change

    def text(self, indent: str = "  ") -> str:
        return "\n".join([f"{indent}usually: {self.means}"] + [f"{indent}try: {t}" for t in self.tries])
