"""A closed stdout (`rc1 status | head -1`) is the reader's choice, not a failure of the command.

While a command runs, sys.stdout is wrapped: the first write or flush that finds the reader gone points the
stream's file descriptor at /dev/null, and every later write goes there. The command finishes what it was
doing (a training run piped into `head` is not cut off between two steps) and exits 141, the status a shell
shows for a process ended by SIGPIPE; it writes no FATAL line, no ERROR report and no failpack.
"""

from __future__ import annotations

import os
import sys

CLOSED_PIPE_EXIT = 141  # 128 + SIGPIPE


class QuietWhenClosed:
    """A text stream that stops writing, silently, once its reader has closed the pipe."""

    def __init__(self, stream):
        self._stream = stream
        self.reader_gone = False

    def write(self, text: str) -> int:
        if not self.reader_gone:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._go_quiet()
        return len(text)

    def flush(self) -> None:
        if not self.reader_gone:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._go_quiet()

    def _go_quiet(self) -> None:
        self.reader_gone = True
        try:
            # What is left in the stream's buffer, and the interpreter's last flush at exit, go nowhere.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError):  # not a file descriptor (a test's StringIO): nothing to point
            pass

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


class guarded_stdout:
    """`with guarded_stdout() as out:` — sys.stdout wrapped for the block; `out.reader_gone` afterwards."""

    def __enter__(self) -> QuietWhenClosed:
        self._saved = sys.stdout
        self.stream = QuietWhenClosed(sys.stdout)
        sys.stdout = self.stream
        return self.stream

    def __exit__(self, *exc) -> bool:
        sys.stdout = self._saved
        # A BrokenPipeError that got past the wrapper (a library writing to the raw buffer) is the same case.
        if exc[0] is not None and issubclass(exc[0], BrokenPipeError):
            self.stream._go_quiet()
            return True
        return False
