"""The sha256 of every gated input, as they are on disk now."""

from __future__ import annotations

from rc1.config.loading import LoadedConfig
from rc1.core.fsutil import sha256_file
from rc1.core.workspace import Workspace
from rc1.data.templates import pack_sha256
from rc1.run.events import Fingerprints

MISSING = "missing"


def _sha_or_missing(path) -> str:
    try:
        return sha256_file(path)
    except FileNotFoundError:
        return MISSING


def _templates_or_missing(path) -> str:
    return pack_sha256(path) if path.is_dir() else MISSING


def current_fingerprints(ws: Workspace, loaded: LoadedConfig) -> Fingerprints:
    return Fingerprints(
        pool=_sha_or_missing(ws.pool_path),
        balanced_pool=_sha_or_missing(ws.balanced_pool_path),
        shadow=_sha_or_missing(ws.shadow_path),
        gate=_sha_or_missing(ws.gate_path),
        config=loaded.sha256,
        weights=_sha_or_missing(loaded.weights_path),
        templates=_templates_or_missing(loaded.templates_path),
    )
