"""When a monitor is due, and how long an erroring monitor waits before its next try."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentmonitors.monitor.cron import cron_matches, timezone_is_valid
from agentmonitors.monitor.durations import duration_ms

DEFAULT_INTERVAL_MS = 30_000
API_POLL_INTERVAL_MS = 300_000
SCHEDULE_MIN_GAP_MS = 60_000
# An erroring monitor is retried after 5 s, 10 s, 20 s ... up to 5 minutes.
BACKOFF_BASE_MS = 5_000
BACKOFF_MAX_MS = 300_000


@dataclass(frozen=True)
class Schedule:
    due: bool
    next_poll_ms: int
    error: str | None = None


def interval_ms(source_name: str, config: dict[str, Any]) -> int:
    """The authored ``interval``, else the source's default cadence."""
    interval = config.get("interval")
    if isinstance(interval, str):
        return duration_ms(interval)
    return API_POLL_INTERVAL_MS if source_name == "api-poll" else DEFAULT_INTERVAL_MS


def schedule_for(
    source_name: str, config: dict[str, Any], last_observation_at_ms: int | None, now_ms: int
) -> Schedule:
    elapsed = now_ms - (last_observation_at_ms or 0)
    if source_name == "schedule":
        timezone = config.get("timezone", "UTC")
        cron = config.get("cron")
        if not isinstance(timezone, str) or not timezone_is_valid(timezone):
            return Schedule(False, 60_000, f'"{timezone}" is not a valid IANA time zone name')
        if not isinstance(cron, str):
            return Schedule(False, 60_000)
        try:
            matches = cron_matches(cron, now_ms, timezone)
        except ValueError as error:
            return Schedule(False, 60_000, str(error))
        return Schedule(matches and elapsed >= SCHEDULE_MIN_GAP_MS, 60_000 - now_ms % 60_000)
    try:
        every = interval_ms(source_name, config)
    except ValueError as error:
        return Schedule(False, DEFAULT_INTERVAL_MS, str(error))
    return Schedule(elapsed >= every, every)


def backoff_ms(consecutive_failures: int) -> int:
    if consecutive_failures <= 0:
        return 0
    return int(min(BACKOFF_BASE_MS * 2 ** (consecutive_failures - 1), BACKOFF_MAX_MS))
