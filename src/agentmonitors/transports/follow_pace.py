"""How fast ``events follow`` may write: within the host's rate limit, never past it.

Claude Code turns each line a monitor prints into a model turn, and drops whatever comes
past a token bucket of 10 lines, refilled one per 2 s (docs/architecture.md, "Live
updates"). A dropped line is a delivery the model never saw, and this side cannot tell,
so the follower keeps its own, stricter bucket and simply does not reserve while it is
empty: the events stay pending in the daemon, and the next line (or the next hook)
carries them all at once. Standard library only.
"""

from __future__ import annotations

import time
from collections.abc import Callable

HOST_BURST = 10
"""Lines the host accepts at once."""
HOST_REFILL_S = 2.0
"""The host gives back one line of room this often."""
BURST = 8
"""Ours: two below the host's, so a line the host counts differently never tips it over."""
REFILL_S = 2.2
"""Ours: a tenth slower than the host's refill, for the same reason."""


class Pace:
    """A token bucket: ``ready`` says whether a line may be written now, ``spend`` takes one."""

    def __init__(
        self,
        burst: int = BURST,
        refill_s: float = REFILL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.burst = burst
        self.refill_s = refill_s
        self.clock = clock
        self._tokens = float(burst)
        self._at = clock()

    def _refill(self) -> float:
        now = self.clock()
        self._tokens = min(float(self.burst), self._tokens + (now - self._at) / self.refill_s)
        self._at = now
        return self._tokens

    def ready(self) -> bool:
        """Whether one whole line of room is there now."""
        return self._refill() >= 1.0

    def spend(self) -> None:
        """Take one line of room (a line was written)."""
        self._refill()
        self._tokens -= 1.0

    def wait_s(self) -> float:
        """Seconds until the next line may be written (0 when it may now)."""
        missing = 1.0 - self._refill()
        return max(0.0, missing * self.refill_s)


def host_accepts(times: list[float]) -> bool:
    """Whether the host's bucket (``HOST_BURST``, one more per ``HOST_REFILL_S``) takes a
    line at each of ``times`` (seconds, in order): what the benchmark and the tests hold
    the follower's lines to."""
    moment = [times[0] if times else 0.0]
    host = Pace(HOST_BURST, HOST_REFILL_S, clock=lambda: moment[0])
    for moment[0] in times:
        if not host.ready():
            return False
        host.spend()
    return True
