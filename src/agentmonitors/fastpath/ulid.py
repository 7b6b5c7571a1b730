"""ULIDs that sort in creation order, even many in one millisecond or across a clock step back.

A ULID is 48 bits of milliseconds then 80 random bits, written as 26 characters of
Crockford's base32. Made here rather than by python-ulid, whose import (it reads its
own package metadata) cost more than a whole ``daemon once`` tick of an unchanged
tree; the ids are what python-ulid's generator with its lax monotonic policy makes
(tests/fastpath/test_ulid.py holds the two side by side).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_RANDOM_BITS = 80
_MAX_RANDOMNESS = (1 << _RANDOM_BITS) - 1
_MAX_TIMESTAMP = (1 << 48) - 1


# Two characters per 10 bits: half the lookups of one per 5 (a baseline of a large
# tree makes an id per file).
_PAIRS = [first + second for first in _ALPHABET for second in _ALPHABET]
_SHIFTS = tuple(range(120, -1, -10))


def encode(timestamp_ms: int, randomness: int) -> str:
    """The 26-character form of the ULID with these parts."""
    value = (timestamp_ms << _RANDOM_BITS) | randomness
    return "".join([_PAIRS[(value >> shift) & 1023] for shift in _SHIFTS])


class MonotonicUlid:
    """Ids whose ``ORDER BY id`` matches insertion order.

    Within one millisecond the random part of the previous id is incremented (fresh
    randomness once it would overflow); the millisecond never goes back when the wall
    clock steps backwards.
    """

    def __init__(self, random_bytes: Callable[[int], bytes] = os.urandom) -> None:
        self._random_bytes = random_bytes
        self._lock = threading.Lock()
        self._last_ms = 0
        self._randomness = 0

    def _fresh(self) -> int:
        return int.from_bytes(self._random_bytes(10), "big")

    def new(self, now_ms: int | None = None) -> str:
        wanted = time.time_ns() // 1_000_000 if now_ms is None else now_ms
        with self._lock:
            if wanted > self._last_ms:
                if wanted > _MAX_TIMESTAMP:
                    raise ValueError("Value exceeds maximum possible timestamp")
                self._last_ms = wanted
                self._randomness = self._fresh()
            elif self._randomness == _MAX_RANDOMNESS:
                self._randomness = self._fresh()
            else:
                self._randomness += 1
            return encode(self._last_ms, self._randomness)


new_id = MonotonicUlid().new
