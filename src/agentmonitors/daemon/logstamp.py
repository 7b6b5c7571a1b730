"""Timestamps on every line a daemon writes to its log file.

A detached daemon's stdout and stderr are its log (``daemon.log``). Each line gets
an ISO-8601 UTC prefix with milliseconds, so a user reading the log can tell when a
tick failed or the daemon stopped. Output to a terminal or a pipe stays as it is.
"""

from __future__ import annotations

import contextlib
import io
import os
import stat
import sys
import time
from collections.abc import Callable


def iso_now(now: Callable[[], float] = time.time) -> str:
    """``2026-12-04T11:54:19.123Z`` for the current moment (or ``now()`` seconds)."""
    whole, millis = divmod(round(now() * 1000), 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + f".{millis:03d}Z"


class StampingWriter(io.RawIOBase):
    """Writes to ``fd``, putting ``<timestamp> `` at the start of every line."""

    def __init__(self, fd: int, now: Callable[[], float] = time.time) -> None:
        super().__init__()
        self._fd = fd
        self._now = now
        self._at_line_start = True

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def write(self, data: bytes | bytearray | memoryview) -> int:  # type: ignore[override]
        chunk = bytes(data)
        out = bytearray()
        for line in chunk.splitlines(keepends=True):
            if self._at_line_start:
                out += iso_now(self._now).encode("ascii") + b" "
            out += line
            self._at_line_start = line.endswith((b"\n", b"\r"))
        view = memoryview(bytes(out))
        while view:
            view = view[os.write(self._fd, view) :]
        return len(chunk)


def stamped_text_stream(fd: int, now: Callable[[], float] = time.time) -> io.TextIOWrapper:
    """A text stream over ``fd`` whose lines carry timestamps."""
    return io.TextIOWrapper(
        StampingWriter(fd, now),  # type: ignore[arg-type]
        encoding="utf-8",
        errors="backslashreplace",
        line_buffering=True,
        write_through=True,
    )


def _is_regular_file(fd: int) -> bool:
    try:
        return stat.S_ISREG(os.fstat(fd).st_mode)
    except OSError:
        return False


def stamp_when_logging_to_a_file() -> bool:
    """Timestamp stdout (and stderr) while they write to a regular file; True for stdout.

    A daemon's log is a regular file; a terminal or a pipe is left alone, and so is
    a stream that is not the interpreter's own.
    """
    stamped = False
    for fd, name in ((1, "stdout"), (2, "stderr")):
        current = getattr(sys, name)
        # Only the interpreter's own stream over the file: a stream someone already
        # replaced (a test capturing output, an embedding program) is theirs.
        if current is not getattr(sys, f"__{name}__") or not _is_regular_file(fd):
            continue
        with contextlib.suppress(OSError, ValueError, AttributeError):
            current.flush()
        setattr(sys, name, stamped_text_stream(fd))
        stamped = stamped or fd == 1
    return stamped
