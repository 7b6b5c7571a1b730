"""Where the runtime gets the time, so tests can move it instead of sleeping."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Protocol


class Clock(Protocol):
    def now_ms(self) -> int:
        """Milliseconds since the Unix epoch."""
        ...


class SystemClock:
    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000


class ManualClock:
    """A clock that only moves when told to."""

    def __init__(self, start_ms: int = 1_767_225_600_000) -> None:
        self._now_ms = start_ms

    def now_ms(self) -> int:
        return self._now_ms

    def advance(self, ms: int) -> None:
        self._now_ms += ms

    def set(self, now_ms: int) -> None:
        self._now_ms = now_ms


def iso_from_ms(ms: int) -> str:
    """``YYYY-MM-DDTHH:MM:SS.sssZ`` (UTC, ms): every timestamp we print or store as text."""
    moment = datetime.fromtimestamp(ms / 1000, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def ms_from_iso(text: str) -> int | None:
    """Parse an ISO-8601 timestamp back to epoch ms; None when it isn't one."""
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except (TypeError, ValueError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)
