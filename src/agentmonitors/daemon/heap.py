"""Memory the daemon freed goes back to the system, so its RSS stays flat for weeks.

glibc keeps memory freed inside its heap for reuse and returns only a free top of the
heap by itself. A daemon that allocates and frees a little on every tick (rows decoded,
observations built, a request's JSON) leaves free holes scattered through the heap, and
its RSS creeps up although the memory it uses does not (docs/architecture.md, "Memory
over weeks"). ``malloc_trim(0)`` hands the free pages of every hole back.

It runs after work the daemon did anyway (a tick), at most once per period, so it adds
no wakeup to an idle daemon. Where the C library has no ``malloc_trim`` (musl, macOS)
there is nothing to call and nothing is done.
"""

from __future__ import annotations

import ctypes
import sys
import time
from collections.abc import Callable

TRIM_PERIOD_S = 300.0
"""At most one trim per period: a trim costs milliseconds, and pages it returns that
are needed again cost a page fault each, so trimming after every tick would cost more
than the memory it keeps."""


def c_library_trim() -> Callable[[], bool] | None:
    """``malloc_trim(0)`` of the C library this process runs on, or None without one."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # a C library without it (musl)
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int

    def release() -> bool:
        return bool(trim(0))

    return release


class HeapTrimmer:
    """Returns freed memory to the system after work, at most once per ``period_s``."""

    def __init__(
        self,
        period_s: float = TRIM_PERIOD_S,
        *,
        clock: Callable[[], float] = time.monotonic,
        trim: Callable[[], bool] | None = None,
        use_c_library: bool = True,
    ) -> None:
        self.period_s = period_s
        self._clock = clock
        self._trim = trim if trim is not None or not use_c_library else c_library_trim()
        self._last: float | None = None
        self.trims = 0

    @property
    def available(self) -> bool:
        return self._trim is not None

    def after_work(self) -> bool:
        """Trim if the last trim is a period old (or none was made); whether it did."""
        if self._trim is None:
            return False
        now = self._clock()
        if self._last is not None and now - self._last < self.period_s:
            return False
        self._last = now
        self._trim()
        self.trims += 1
        return True
