"""What a config's fingerprint holds for a reward model it names (`reward.functions[].model`): the model's files,
read from disk only (never the network)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from rc1.core.errors import BadInput

WEIGHT_PATTERNS = ("*.safetensors", "*.bin")
# Besides the weights, what changes a score: the model's config and its tokenizer with its chat template.
SCORED_FILES = (
    "config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "chat_template.jinja",
)


def model_source(model: str, folder: Path) -> str:
    """A reward model's source as the config names it: a directory relative to the config's folder where one is
    there, else the name as given (an absolute directory, or a hub id)."""
    local = folder / model
    return str(local.resolve()) if local.is_dir() else model


def weights_sha256(source: str) -> str:
    """The fingerprint of a reward model. A local directory: sha256 over the sorted names, sizes and bytes of its
    weight files (*.safetensors, *.bin), its config and its tokenizer files (SCORED_FILES). A hub id:
    `hub:<id>`. Never a network call."""
    folder = Path(source)
    if folder.is_dir():
        weights = {p for pattern in WEIGHT_PATTERNS for p in folder.glob(pattern)}
        files = [p for p in sorted(weights | {folder / name for name in SCORED_FILES}) if p.is_file()]
        if not weights:
            raise BadInput(f"{source}: no weight files (*.safetensors, *.bin) in this reward model directory")
        digest = hashlib.sha256()
        for path in files:
            digest.update(f"{path.name}\0{path.stat().st_size}\0".encode())
            with open(path, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(block)
        return digest.hexdigest()
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    try:
        validate_repo_id(source)
    except HFValidationError:
        raise BadInput(f"{source}: the reward model is neither a local directory nor a hub id (org/name)") from None
    # The id alone, as for a hub task: whether the local cache holds it yet must not change the fingerprint (round 1's
    # probe downloads it). It names no revision, so a download of a newer one is not caught: a directory is.
    return f"hub:{source}"
