"""Progress bars for long steps: on stderr, and only when stderr is a terminal (logs stay clean)."""

from __future__ import annotations

import contextlib
import sys

from tqdm import tqdm


@contextlib.contextmanager
def progress(description: str, total: int):
    bar = tqdm(total=total, desc=description, file=sys.stderr, disable=not sys.stderr.isatty(), leave=False,
               mininterval=0.5)
    try:
        yield bar
    finally:
        bar.close()
