"""The reader as the repo ships it (`rc1/reader/weights/`), pinned by sha256: a run loads these files only when they
are the bytes `python -m rc1.reader build` made (`make reader`; `make reader-check` builds them again and compares).

Pinned are the weights and the tokenizer, what decides every token the model writes; the config files around them
carry the transformers version that wrote them and are checked by loading (`reader_dir` loads nothing itself).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from rc1.core.errors import BadInput
from rc1.core.fsutil import sha256_file

WEIGHTS = Path(__file__).resolve().parent / "weights"
PINNED = {
    "model.safetensors": "19f5a3b5b52dfcf3e22e65d00a164e609c1c6764b30d2d2ecff3a182e33b0648",
    "tokenizer.json": "61436e17beb354c52c1c771d38c5040943b402bd637e6cb90a45f085a32b8013",
}


def reader_dir() -> Path:
    """The shipped reader's folder, once its pinned files are checked (BadInput naming the file that differs)."""
    return _checked(WEIGHTS)


@cache
def _checked(folder: Path) -> Path:
    for name, pinned in PINNED.items():
        path = folder / name
        if not path.is_file():
            raise BadInput(f"{path}: the built-in reader's {name} is missing; rebuild it with `make reader`")
        found = sha256_file(path)
        if found != pinned:
            raise BadInput(
                f"{path}: sha256 {found[:12]}… is not the pinned {pinned[:12]}… (rc1/reader/shipped.py); "
                "rebuild the reader with `make reader`, or restore the file from git"
            )
    return folder


def reader_sha256() -> str:
    """One digest of the pinned files: what names a warm start of the reader in the model cache."""
    import hashlib

    return hashlib.sha256("".join(f"{k}={v};" for k, v in sorted(PINNED.items())).encode()).hexdigest()
