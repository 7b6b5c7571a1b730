"""When a schedule monitor is due: cron minutes, time zones, DST days, no backfill."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agentmonitors.monitor.cron import cron_fires_in_minute, next_cron_fire_ms
from agentmonitors.runtime.scheduling import Schedule, schedule_for
from agentmonitors.sources.registry import bundled_registry

traits = bundled_registry().traits


def ms(text: str) -> int:
    """Epoch ms of an ISO UTC timestamp such as ``2026-03-08T07:00:00``."""
    return int(datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp() * 1000)


def iso(value: int) -> str:
    return datetime.fromtimestamp(value / 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M")


def fires_during(cron: str, timezone: str, start: str, hours: int) -> list[str]:
    """Every UTC minute in ``hours`` from ``start`` in which the cron fires."""
    found: list[str] = []
    after = ms(start) - 1
    end = ms(start) + hours * 3_600_000
    while True:
        upcoming = next_cron_fire_ms(cron, timezone, after)
        if upcoming is None or upcoming >= end:
            return found
        found.append(iso(upcoming))
        after = upcoming


def schedule(cron: str, now: str, last: str | None = None, timezone: str | None = None) -> Schedule:
    config: dict[str, object] = {"cron": cron}
    if timezone is not None:
        config["timezone"] = timezone
    return schedule_for(traits("schedule"), config, None if last is None else ms(last), ms(now))


# --------------------------------------------------------------------------- due or not


def test_due_in_a_matching_minute_only() -> None:
    assert schedule("0 9 * * *", "2026-05-28T09:00:00").due
    assert schedule("0 9 * * *", "2026-05-28T09:00:59.999").due
    assert not schedule("0 9 * * *", "2026-05-28T09:01:00").due
    assert not schedule("0 9 * * *", "2026-05-28T08:59:59.999").due


def test_runs_once_per_matching_minute() -> None:
    assert not schedule("* * * * *", "2026-05-28T09:00:40", last="2026-05-28T09:00:10").due
    # The last run was 30 s ago but in the previous minute: a drifting 30 s tick
    # must not skip this minute (a 60 s gap between runs would).
    assert schedule("* * * * *", "2026-05-28T09:01:20", last="2026-05-28T09:00:50").due


def test_not_due_reports_the_next_fire_measured_from_the_last_run() -> None:
    last = "2026-05-28T09:00:10"
    result = schedule("0 9 * * *", "2026-05-28T09:00:40", last=last)
    assert not result.due and result.error is None
    assert iso(ms(last) + result.next_poll_ms) == "2026-05-29T09:00"
    first = schedule("*/15 * * * *", "2026-05-28T09:07:00")
    assert iso(ms("2026-05-28T09:07:00") + first.next_poll_ms) == "2026-05-28T09:15"


def test_a_missed_window_is_not_backfilled() -> None:
    # Down from 09:00 day 1 to 10:00 day 4: nothing is owed for days 2-4.
    last = "2026-05-28T09:00:05"
    result = schedule("0 9 * * *", "2026-05-31T10:00:00", last=last)
    assert not result.due
    assert iso(ms(last) + result.next_poll_ms) == "2026-06-01T09:00"
    assert schedule("0 9 * * *", "2026-06-01T09:00:30", last=last).due


def test_cron_is_read_in_its_time_zone() -> None:
    # 09:00 in New York is 13:00 UTC in summer, 14:00 UTC in winter.
    assert schedule("0 9 * * *", "2026-05-28T13:00:00", timezone="America/New_York").due
    assert not schedule("0 9 * * *", "2026-05-28T09:00:00", timezone="America/New_York").due
    assert schedule("0 9 * * *", "2026-01-15T14:00:00", timezone="America/New_York").due
    assert schedule("0 9 * * *", "2026-05-28T23:00:00", timezone="Asia/Tokyo").due is False
    assert schedule("0 9 * * *", "2026-05-28T00:00:00", timezone="Asia/Tokyo").due
    assert schedule("30 9 * * *", "2026-05-28T04:00:00", timezone="Asia/Kolkata").due


def test_day_of_month_and_day_of_week_are_either_or() -> None:
    # Standard cron (docs/decisions): both restricted => either matches.
    cron = "0 9 13 * 5"
    assert schedule(cron, "2026-01-13T09:00:00").due  # a Tuesday the 13th
    assert schedule(cron, "2026-02-06T09:00:00").due  # a Friday the 6th
    assert schedule(cron, "2026-02-13T09:00:00").due  # Friday the 13th
    assert not schedule(cron, "2026-01-14T09:00:00").due  # Wednesday the 14th
    # One side a star: the other alone decides.
    assert not schedule("0 9 * * 5", "2026-01-13T09:00:00").due
    assert schedule("0 9 13 * *", "2026-01-13T09:00:00").due
    assert schedule("0 9 * * 7", "2026-01-11T09:00:00").due  # 7 is Sunday too


def test_steps_count_from_the_start_of_their_range() -> None:
    assert fires_during("5/20 * * * *", "UTC", "2026-05-28T09:00:00", 1) == [
        "2026-05-28T09:05",
        "2026-05-28T09:25",
        "2026-05-28T09:45",
    ]


# --------------------------------------------------------------------------- DST


def test_spring_forward_in_new_york() -> None:
    zone = "America/New_York"
    # 2026-03-08: 02:00 EST jumps to 03:00 EDT (07:00 UTC). A fixed time inside the
    # skipped hour runs when the clock resumes, once.
    assert fires_during("30 2 * * *", zone, "2026-03-08T00:00:00", 24) == ["2026-03-08T07:00"]
    assert fires_during("30 2 * * *", zone, "2026-03-09T00:00:00", 24) == ["2026-03-09T06:30"]
    assert fires_during("0 3 * * *", zone, "2026-03-08T00:00:00", 24) == ["2026-03-08T07:00"]
    # Fixed times around the gap keep their wall time: the offset changes.
    assert fires_during("0 9 * * *", zone, "2026-03-07T00:00:00", 48) == [
        "2026-03-07T14:00",
        "2026-03-08T13:00",
    ]
    # A wildcard-hour job follows real time: 01:30 EST, then 03:00 EDT.
    assert fires_during("*/30 * * * *", zone, "2026-03-08T06:00:00", 2) == [
        "2026-03-08T06:00",
        "2026-03-08T06:30",
        "2026-03-08T07:00",
        "2026-03-08T07:30",
    ]
    assert schedule("30 2 * * *", "2026-03-08T07:00:20", timezone=zone).due


def test_fall_back_in_new_york() -> None:
    zone = "America/New_York"
    # 2026-11-01: 02:00 EDT falls back to 01:00 EST (06:00 UTC); 01:xx happens twice.
    # A fixed time in the repeated hour runs once, on its first pass.
    assert fires_during("30 1 * * *", zone, "2026-11-01T00:00:00", 24) == ["2026-11-01T05:30"]
    assert schedule("30 1 * * *", "2026-11-01T05:30:10", timezone=zone).due
    second_pass = schedule(
        "30 1 * * *", "2026-11-01T06:30:10", last="2026-11-01T05:30:10", timezone=zone
    )
    assert not second_pass.due
    assert iso(ms("2026-11-01T05:30:10") + second_pass.next_poll_ms) == "2026-11-02T06:30"
    # A wildcard job runs through both passes (every real half hour).
    assert fires_during("*/30 * * * *", zone, "2026-11-01T05:00:00", 2) == [
        "2026-11-01T05:00",
        "2026-11-01T05:30",
        "2026-11-01T06:00",
        "2026-11-01T06:30",
    ]
    assert fires_during("0 * * * *", zone, "2026-11-01T04:00:00", 4) == [
        "2026-11-01T04:00",
        "2026-11-01T05:00",
        "2026-11-01T06:00",
        "2026-11-01T07:00",
    ]
    assert fires_during("0 9 * * *", zone, "2026-10-31T00:00:00", 48) == [
        "2026-10-31T13:00",
        "2026-11-01T14:00",
    ]


def test_cron_fires_in_minute_matches_the_iteration() -> None:
    zone = "America/New_York"
    assert cron_fires_in_minute("30 1 * * *", zone, ms("2026-11-01T05:30:59"))
    assert not cron_fires_in_minute("30 1 * * *", zone, ms("2026-11-01T06:30:00"))
    assert cron_fires_in_minute("*/30 * * * *", zone, ms("2026-11-01T06:30:00"))


# --------------------------------------------------------------------------- errors


def test_bad_timezone_or_cron_is_an_error_for_that_monitor() -> None:
    bad_zone = schedule("0 9 * * *", "2026-05-28T09:00:00", timezone="Mars/Olympus")
    assert bad_zone == Schedule(False, 60_000, '"Mars/Olympus" is not a valid IANA time zone name')
    bad_cron = schedule("61 9 * * *", "2026-05-28T09:00:00")
    assert not bad_cron.due
    assert bad_cron.error is not None and "not a valid cron expression" in bad_cron.error
    with pytest.raises(ValueError, match="time zone"):
        next_cron_fire_ms("0 9 * * *", "Nowhere/Else", 0)


def test_non_string_cron_is_never_due_and_no_error() -> None:
    result = schedule_for(traits("schedule"), {"cron": 5}, None, ms("2026-05-28T09:00:00"))
    assert (result.due, result.error) == (False, None)


def test_interval_sources_are_unchanged() -> None:
    now = ms("2026-05-28T09:00:00")
    assert schedule_for(traits("command-poll"), {}, now - 30_000, now).due
    assert not schedule_for(traits("command-poll"), {"interval": "1m"}, now - 30_000, now).due
    assert not schedule_for(traits("api-poll"), {}, now - 30_000, now).due
