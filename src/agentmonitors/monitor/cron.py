"""Cron expressions and IANA time zones, checked the way the runtime will use them."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from functools import lru_cache

CRON_FIELD_COUNT_MESSAGE = 'Must be a five-field cron expression (e.g., "0 9 * * 1-5")'
TIMEZONE_MESSAGE = 'Must be a valid IANA time zone name (e.g., "America/New_York", "UTC")'

_FIVE_FIELDS = re.compile(r"^\s*\S+(?:\s+\S+){4}\s*$")


@lru_cache(maxsize=256)
def timezone_is_valid(name: str) -> bool:
    """True when ``name`` is an IANA zone this machine (or the tzdata package) knows."""
    if not name or name != name.strip():
        return False
    from zoneinfo import ZoneInfo

    try:
        ZoneInfo(name)
    except (ValueError, KeyError, OSError):
        return False
    return True


def cron_problem(expression: str) -> str | None:
    """Why ``expression`` is not a usable five-field cron expression, or None.

    Standard cron semantics (cronsim): day-of-month and day-of-week are either/or,
    steps count from the start of their range, ``7`` and month/day names are accepted.
    """
    if not _FIVE_FIELDS.match(expression):
        return CRON_FIELD_COUNT_MESSAGE
    from cronsim import CronSim, CronSimError

    try:
        CronSim(" ".join(expression.split()), datetime(2000, 1, 1, tzinfo=UTC))
    except CronSimError as error:
        detail = str(error).strip().rstrip(".") or "invalid field"
        return f'"{expression}" is not a valid cron expression: {detail[0].lower()}{detail[1:]}'
    except Exception as error:
        return f'"{expression}" is not a valid cron expression: {error}'
    return None


def cron_matches(expression: str, now_ms: int, timezone: str = "UTC") -> bool:
    """Whether ``expression`` fires in the minute holding ``now_ms`` (wall time in ``timezone``).

    ``ValueError`` for an unknown zone or a malformed expression, so the caller can
    report the monitor instead of silently never firing.
    """
    from datetime import timedelta
    from zoneinfo import ZoneInfo

    from cronsim import CronSim, CronSimError

    if not timezone_is_valid(timezone):
        raise ValueError(f'"{timezone}" is not a valid IANA time zone name')
    minute = datetime.fromtimestamp((now_ms // 60_000) * 60, tz=ZoneInfo(timezone))
    try:
        # The first match strictly after the previous second is this minute itself
        # exactly when the expression matches it.
        upcoming = next(CronSim(" ".join(expression.split()), minute - timedelta(seconds=1)))
    except (CronSimError, StopIteration) as error:
        raise ValueError(f'"{expression}" is not a valid cron expression: {error}') from error
    return upcoming == minute
