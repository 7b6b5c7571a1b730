"""Cron expressions and IANA time zones, checked the way the runtime will use them."""

from __future__ import annotations

import re
from functools import lru_cache
from types import ModuleType

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import tzinfo

CRON_FIELD_COUNT_MESSAGE = 'Must be a five-field cron expression (e.g., "0 9 * * 1-5")'
TIMEZONE_MESSAGE = 'Must be a valid IANA time zone name (e.g., "America/New_York", "UTC")'

_FIVE_FIELDS = re.compile(r"^\s*\S+(?:\s+\S+){4}\s*$")


def _zone(name: str) -> tzinfo:
    """The IANA zone ``name``; ``ValueError``, ``KeyError`` or ``OSError`` when unknown."""
    # Lazy: a tick whose monitors have no schedule or zone never pays for zoneinfo.
    from zoneinfo import ZoneInfo

    return ZoneInfo(name)


def _cronsim() -> ModuleType:
    """The cron engine, loaded on the first cron expression."""
    # Lazy: cronsim costs every tick an import; only a schedule monitor needs it.
    import cronsim

    return cronsim


@lru_cache(maxsize=256)
def timezone_is_valid(name: str) -> bool:
    """True when ``name`` is an IANA zone this machine (or the tzdata package) knows."""
    if not name or name != name.strip():
        return False
    try:
        _zone(name)
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
    cronsim = _cronsim()
    # Lazy: cronsim loads datetime with it; a command that checks no cron never does.
    from datetime import UTC, datetime

    try:
        cronsim.CronSim(" ".join(expression.split()), datetime(2000, 1, 1, tzinfo=UTC))
    except cronsim.CronSimError as error:
        detail = str(error).strip().rstrip(".") or "invalid field"
        return f'"{expression}" is not a valid cron expression: {detail[0].lower()}{detail[1:]}'
    except Exception as error:
        return f'"{expression}" is not a valid cron expression: {error}'
    return None


def next_cron_fire_ms(expression: str, timezone: str, after_ms: int) -> int | None:
    """The first instant strictly after ``after_ms`` at which ``expression`` fires.

    Fire times are real instants, so daylight-saving days behave like Debian cron: a
    fixed-time job in a skipped hour runs when the hour resumes, one in a repeated hour
    runs once (its first pass), a wildcard-hour job runs in both passes. ``None`` when
    it never fires again; ``ValueError`` for an unknown zone or a malformed expression,
    so the caller can report the monitor instead of silently never firing.
    """
    if not timezone_is_valid(timezone):
        raise ValueError(f'"{timezone}" is not a valid IANA time zone name')
    # Lazy: cronsim loads datetime with it; a command that checks no cron never does.
    from datetime import datetime

    # From the instant, so the start carries the right UTC offset (fold) in a
    # repeated hour.
    start = datetime.fromtimestamp(after_ms // 1000, tz=_zone(timezone))
    cronsim = _cronsim()
    try:
        fires = cronsim.CronSim(" ".join(expression.split()), start)
    except (cronsim.CronSimError, ValueError) as error:
        raise ValueError(f'"{expression}" is not a valid cron expression: {error}') from error
    # cronsim walks fixed-time expressions in wall time, so in a repeated hour it can
    # hand back the first pass of a wall time the start already lies beyond: skip it.
    for _ in range(8):
        try:
            fire = next(fires)
        except StopIteration:
            return None
        fire_ms = int(fire.timestamp()) * 1000
        if fire_ms > after_ms:
            return fire_ms
    return None


def cron_fires_in_minute(expression: str, timezone: str, now_ms: int) -> bool:
    """Whether ``expression`` fires in the minute (of real time) holding ``now_ms``."""
    minute = now_ms - now_ms % 60_000
    upcoming = next_cron_fire_ms(expression, timezone, minute - 1)
    return upcoming is not None and upcoming < minute + 60_000
