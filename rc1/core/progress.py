"""Progress bars for long steps: on stderr, and only when stderr is a terminal (logs stay clean)."""

from __future__ import annotations

import contextlib
import sys

from tqdm import tqdm


@contextlib.contextmanager
def progress(description: str, total: int):
    bar = tqdm(
        total=total, desc=description, file=sys.stderr, disable=not sys.stderr.isatty(), leave=False, mininterval=0.5
    )
    try:
        yield bar
    finally:
        bar.close()


class StepProgress:
    """Training's console progress: a line every `every` optimizer steps (and at the last) with the step's
    numbers, tokens per second and the time left at this segment's mean pace; a tqdm bar on a terminal."""

    def __init__(self, total: int, every: int):
        self.total = total
        self.every = every
        self._bar: tqdm | None = None
        self._seconds = 0.0
        self._steps = 0

    def step(self, step: int, seconds: float, tokens: int, numbers: str) -> None:
        if self._bar is None:
            self._bar = tqdm(
                total=self.total,
                initial=step - 1,
                file=sys.stderr,
                disable=not sys.stderr.isatty(),
                leave=False,
                unit="step",
                mininterval=0.5,
            )
        self._seconds += seconds
        self._steps += 1
        self._bar.update(1)
        if step % self.every and step != self.total:
            return
        left = (self.total - step) * self._seconds / self._steps
        rate = tokens / seconds if seconds > 0 else 0.0
        line = f"  step {step}/{self.total}  {numbers}  {rate:.0f} tok/s  {seconds:.2f}s/step  ETA {_clock(left)}"
        if self._bar.disable:
            print(line, flush=True)
        else:
            self._bar.write(line)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def _clock(seconds: float) -> str:
    seconds = round(seconds)
    hours, rest = divmod(seconds, 3600)
    return f"{hours}h{rest // 60:02d}m" if hours else f"{rest // 60}m{rest % 60:02d}s"
