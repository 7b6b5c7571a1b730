"""ULIDs that sort in creation order, even many in one millisecond or across a clock step back."""

from __future__ import annotations

import threading
from typing import Any


class MonotonicUlid:
    """Wraps python-ulid's monotonic generator so ``ORDER BY id`` matches insertion order.

    The library increments the random part within one millisecond; this wrapper also
    refuses to go back in time when the wall clock steps backwards.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last_ms = 0
        self._generator: Any = None

    def new(self, now_ms: int | None = None) -> str:
        import time

        from ulid import LaxMonotonicPolicy, ULIDGenerator

        with self._lock:
            if self._generator is None:
                self._generator = ULIDGenerator(policy=LaxMonotonicPolicy())
            wanted = time.time_ns() // 1_000_000 if now_ms is None else now_ms
            self._last_ms = max(self._last_ms, wanted)
            return str(self._generator.generate(self._last_ms))


new_id = MonotonicUlid().new
