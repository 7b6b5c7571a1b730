"""When a monitor is due, and how long an erroring monitor waits before its next try.

A source says how its monitors are scheduled (its ``cadence`` trait): every interval
(the authored ``interval``, else the source's default), or on a cron. A cron monitor
(``schedule``) is due in a minute its cron fires in (standard cron semantics via
cronsim, read in its time zone) unless it already ran in that minute. Fire times are
computed as real instants, so daylight-saving days behave like Debian cron: a fixed-time
job in a skipped hour runs when the hour resumes (``30 2 * * *`` at 03:00 on the
spring-forward day), a fixed-time job in a repeated hour runs once (its first pass),
and a wildcard-hour job runs in both passes. A minute missed while no process ran is
never replayed; fires missed while the daemon ran but could not look (asleep, stopped,
the wall clock set forward) are caught up by one run, never one per fire. A wall clock
set back never delays a monitor: a last run "in the future" does not count against it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentmonitors.fastpath.lean_dataclass import dataclass
from agentmonitors.monitor.cron import cron_fires_in_minute, next_cron_fire_ms, timezone_is_valid
from agentmonitors.sources.traits import DEFAULT_INTERVAL_MS, Every, OnCron, SourceTraits

# An erroring monitor is retried after 5 s, 10 s, 20 s ... up to 5 minutes, and never
# sooner than its own cadence would run it (retry_delay_ms).
BACKOFF_BASE_MS = 5_000
BACKOFF_MAX_MS = 300_000


@dataclass(frozen=True)
class Schedule:
    due: bool
    # How long after ``last_observation_at_ms`` (or now, before the first observation)
    # the monitor is next due; the tick reports that instant as ``nextDueAt``.
    next_poll_ms: int
    error: str | None = None


def cadence_of(traits: SourceTraits, config: Mapping[str, Any]) -> Every | OnCron:
    """How the source schedules a monitor with ``config``; raises with the reason it cannot."""
    cadence = traits.cadence(config)
    if not isinstance(cadence, Every | OnCron):
        raise ValueError(f"the source's cadence is {type(cadence).__name__}, not Every or OnCron")
    if isinstance(cadence, Every) and (
        not isinstance(cadence.interval_ms, int) or isinstance(cadence.interval_ms, bool)
    ):
        raise ValueError(f"the source's interval is {cadence.interval_ms!r}, not milliseconds")
    return cadence


def schedule_for(
    traits: SourceTraits,
    config: Mapping[str, Any],
    last_observation_at_ms: int | None,
    now_ms: int,
    checked_at_ms: int | None = None,
) -> Schedule:
    """Whether a monitor of the source ``traits`` describe is due now, and when it is next.

    ``checked_at_ms`` is when this process last asked about the monitor (None in a
    process that has not): a cron fire between that look and now was missed while the
    process ran (a laptop asleep, a stopped process, a clock set forward) and is run
    once now.
    """
    try:
        cadence = cadence_of(traits, config)
    except Exception as error:  # a plugin's cadence must not abort the tick
        return Schedule(False, DEFAULT_INTERVAL_MS, str(error).strip() or type(error).__name__)
    if isinstance(cadence, OnCron):
        return _schedule_for_cron(cadence, last_observation_at_ms, now_ms, checked_at_ms)
    last = last_observation_at_ms or 0
    if last > now_ms:
        # The last run is in the future: the wall clock was set back since. Measured
        # on that clock the interval would last the jump too (a day, for a day); the
        # monitor runs now and its interval counts from there.
        return Schedule(True, cadence.interval_ms)
    return Schedule(now_ms - last >= cadence.interval_ms, cadence.interval_ms)


def _schedule_for_cron(
    cadence: OnCron, last_observation_at_ms: int | None, now_ms: int, checked_at_ms: int | None
) -> Schedule:
    timezone, cron = cadence.timezone, cadence.cron
    if not isinstance(timezone, str) or not timezone_is_valid(timezone):
        return Schedule(False, 60_000, f'"{timezone}" is not a valid IANA time zone name')
    if not isinstance(cron, str):
        return Schedule(False, 60_000)
    minute = now_ms - now_ms % 60_000
    last = last_observation_at_ms
    try:
        fires_now = cron_fires_in_minute(cron, timezone, now_ms)
        # The first fire after this minute's start: this minute's own was either
        # taken below or does not exist.
        upcoming = next_cron_fire_ms(cron, timezone, minute)
        # Missed: a fire after both the last look and the last run (a run after now,
        # the clock set back, is no run of this timeline's).
        since = checked_at_ms
        if since is not None and last is not None and since < last <= now_ms:
            since = last
        missed = _missed_fire(cron, timezone, since, minute)
    except ValueError as error:
        return Schedule(False, 60_000, str(error))
    # One run per matching minute: the guard is the minute, not a 60 s gap, so ticks
    # that drift across minute boundaries never skip a matching minute. A last run
    # after this minute means the wall clock was set back: this minute fires again
    # (as cron does after a clock is set back by hours), it is not a day away.
    ran_this_minute = last is not None and minute <= last < minute + 60_000
    if (fires_now and not ran_this_minute) or missed is not None:
        return Schedule(True, 60_000 if upcoming is None else upcoming - now_ms)
    base = last if last is not None and last <= now_ms else now_ms
    if upcoming is None:  # the expression never fires again (e.g. 30 February)
        return Schedule(False, 60_000)
    return Schedule(False, max(upcoming - base, 0))


def _missed_fire(cron: str, timezone: str, since_ms: int | None, minute: int) -> int | None:
    """The first fire after the minute of ``since_ms`` and before this minute, if any.

    However many fires fell in that gap (a laptop asleep all night under an hourly cron),
    the caller runs the monitor once: one catch-up, never a storm. A look after this
    minute (the clock set back) or in it misses nothing. Downtime, when no process
    looked, is not replayed (as cron).
    """
    if since_ms is None or since_ms >= minute:
        return None
    fire = next_cron_fire_ms(cron, timezone, since_ms - since_ms % 60_000)
    return fire if fire is not None and fire < minute else None


def backoff_ms(consecutive_failures: int) -> int:
    if consecutive_failures <= 0:
        return 0
    return int(min(BACKOFF_BASE_MS * 2 ** (consecutive_failures - 1), BACKOFF_MAX_MS))


def retry_delay_ms(consecutive_failures: int, floor_ms: int) -> int:
    """How long after a failure the monitor is tried again.

    The backoff grows with the failures in a row, but a retry never comes sooner than
    ``floor_ms``, the monitor's cadence (its interval, or the wait for its next cron
    fire): a failing monitor is never polled more often than a healthy one.
    """
    return max(backoff_ms(consecutive_failures), floor_ms, 0)
