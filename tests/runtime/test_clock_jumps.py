"""A wall clock set back or forward a day: nothing waits a day, nothing fires in a storm.

Settle windows, throttles and intervals are measured against stored wall-clock instants
(they survive a restart); a jump of the wall clock must neither stretch them by the
jump nor replay every cron fire it skipped. Driven by a manual clock, never by sleeping.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agentmonitors.clock import iso_from_ms
from agentmonitors.monitor.model import RollupNotify, ThrottleNotify
from agentmonitors.monitor.policy import UrgencyBand
from agentmonitors.runtime.notify import CapturedMonitor, dispatch, envelope_for
from agentmonitors.runtime.scheduling import schedule_for
from agentmonitors.sources.observation import Observation
from agentmonitors.sources.registry import bundled_registry
from tests.runtime.test_tick import START, Harness, observed, write_monitor

DAY = 86_400_000
traits = bundled_registry().traits


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    root = tmp_path / "ws"
    (root / ".claude" / "monitors").mkdir(parents=True)
    h = Harness(root, tmp_path / "data" / "inbox.db")
    yield h
    h.db.close()


def ms(text: str) -> int:
    return int(datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp() * 1000)


def captured() -> CapturedMonitor:
    return CapturedMonitor(
        id="docs",
        display_name="docs",
        file_path="/w/.claude/monitors/docs/MONITOR.md",
        instructions="Review.",
        source_name="scripted",
        name=None,
        band=UrgencyBand("normal", "normal"),
        baseline_strategy="net",
        tags=(),
    )


# --------------------------------------------------------------------------- settle windows


@pytest.mark.parametrize("jump", [-DAY, DAY])
def test_a_held_high_observation_is_out_at_the_next_tick_after_a_day_jump(
    harness: Harness, jump: int
) -> None:
    write_monitor(
        harness.workspace, "status", "watch:\n  type: scripted\n  interval: 5m\nurgency: high\n"
    )
    harness.source.queue.append(observed(Observation(title="Deploy failed")))
    assert harness.tick().emitted_event_ids == []  # settling for 15 s

    harness.clock.set(START + 3_000 + jump)
    released = harness.tick()
    assert len(released.emitted_event_ids) == 1
    # Nothing is left to wake for a day later: the next wake is within the interval.
    assert released.next_wake_ms is not None
    assert released.next_wake_ms <= harness.clock.now_ms() + 300_000


def test_a_settle_window_still_holds_when_the_clock_only_runs_on(harness: Harness) -> None:
    write_monitor(
        harness.workspace, "status", "watch:\n  type: scripted\n  interval: 5m\nurgency: high\n"
    )
    harness.source.queue.append(observed(Observation(title="Deploy failed")))
    harness.tick()
    harness.clock.advance(14_999)
    assert harness.tick().emitted_event_ids == []


def test_an_interval_monitor_runs_once_when_its_last_run_is_in_the_future(
    harness: Harness,
) -> None:
    write_monitor(harness.workspace, "poll", "watch:\n  type: scripted\n  interval: 1m\n")
    assert harness.tick().evaluated_monitors == ["poll"]
    harness.clock.set(START + 10_000 - DAY)
    assert harness.tick().evaluated_monitors == ["poll"]  # not a day from now
    harness.clock.advance(30_000)
    assert harness.tick().evaluated_monitors == []  # its interval counts from that run
    harness.clock.advance(30_000)
    assert harness.tick().evaluated_monitors == ["poll"]


def test_a_silence_window_is_not_stretched_by_a_clock_set_back(harness: Harness) -> None:
    write_monitor(
        harness.workspace,
        "ci",
        "watch:\n  type: scripted\n  interval: 1d\nexpect:\n  change-within: 90m\n",
    )
    harness.tick()  # the baseline
    harness.clock.advance(1_000)
    harness.source.queue.append(observed(Observation(title="beat", object_key="ci")))
    assert harness.tick("ci").next_wake_ms == START + 1_000 + 90 * 60_000  # a change starts it
    back = START + 60_000 - DAY
    harness.clock.set(back)
    assert harness.tick().next_wake_ms == back + 90 * 60_000  # not a day and 90 min away
    harness.clock.set(back + 90 * 60_000 - 1)
    harness.tick()
    harness.clock.advance(1)
    harness.tick()
    titles = [row["title"] for row in harness.rows("SELECT title FROM monitor_events")]
    assert titles == ["beat", "ci has not changed in 1h 30m"]


def test_a_throttle_ends_with_its_window_when_the_clock_is_set_back() -> None:
    config = ThrottleNotify.model_validate(
        {"strategy": "throttle", "suppress-for": "1m"}
    ).to_policy()
    monitor = captured()
    first = dispatch(
        config, monitor, [envelope_for(monitor, Observation(title="a"), START)], START, {}
    )
    assert first.state["suppressedUntil"] == iso_from_ms(START + 60_000)
    back = START + 1_000 - DAY
    second = dispatch(
        config, monitor, [envelope_for(monitor, Observation(title="b"), back)], back, first.state
    )
    assert [item.observation.title for item in second.emitted] == ["b"]
    inside = back + 30_000
    third = dispatch(
        config,
        monitor,
        [envelope_for(monitor, Observation(title="c"), inside)],
        inside,
        second.state,
    )
    assert third.emitted == []  # the new window holds as authored


def test_a_rollup_window_slept_through_releases_the_batch_once_on_waking() -> None:
    config = RollupNotify.model_validate({"strategy": "rollup", "window": "0 17 * * *"}).to_policy()
    monitor = captured()
    at = ms("2026-05-28T16:00:00")
    held = dispatch(config, monitor, [envelope_for(monitor, Observation(title="a"), at)], at, {})
    assert held.emitted == []
    before_window = ms("2026-05-28T16:59:59")
    assert dispatch(config, monitor, [], before_window, held.state).emitted == []
    # Asleep, or the clock set forward, across 17:00 (and a whole day): out now, once.
    woken = ms("2026-05-29T18:10:00")
    out = dispatch(config, monitor, [], woken, held.state)
    assert [item.observation.title for item in out.emitted] == ["a"]
    assert "pendingRollup" not in out.state
    later = woken + 60_000
    new = [envelope_for(monitor, Observation(title="b"), later)]
    assert dispatch(config, monitor, new, later, out.state).emitted == []


# --------------------------------------------------------------------------- schedules


def run_cron(cron: str, moments: list[str], start_last: str | None = None) -> list[str]:
    """Step a cron monitor through ``moments`` as one daemon would; the moments it runs."""
    last = None if start_last is None else ms(start_last)
    checked: int | None = None
    runs: list[str] = []
    for moment in moments:
        now = ms(moment)
        if schedule_for(traits("schedule"), {"cron": cron}, last, now, checked).due:
            runs.append(moment)
            last = now
        checked = now
    return runs


def test_a_clock_set_back_a_day_does_not_silence_a_cron_for_a_day() -> None:
    moments = [
        "2026-05-28T10:00:05",
        "2026-05-28T10:30:00",
        # Set back a day: the last run is now in the future.
        "2026-05-27T10:30:05",
        "2026-05-27T10:59:59",
        "2026-05-27T11:00:01",
        "2026-05-27T11:00:40",
        "2026-05-27T12:00:02",
    ]
    runs = run_cron("0 * * * *", moments)
    assert runs == ["2026-05-28T10:00:05", "2026-05-27T11:00:01", "2026-05-27T12:00:02"]


def test_a_clock_set_forward_a_day_is_one_catch_up_run_not_twenty_four() -> None:
    moments = [
        "2026-05-28T10:00:05",
        "2026-05-28T10:30:00",
        # Forward a day: 24 hourly fires were skipped.
        "2026-05-29T10:30:00",
        "2026-05-29T10:30:30",
        "2026-05-29T10:45:00",
        "2026-05-29T10:59:59",
        "2026-05-29T11:00:00",
    ]
    runs = run_cron("0 * * * *", moments)
    assert runs == ["2026-05-28T10:00:05", "2026-05-29T10:30:00", "2026-05-29T11:00:00"]


def test_a_sleep_across_a_fire_catches_it_up_once_when_the_process_wakes() -> None:
    # The process looked at 08:59:30, then slept (a laptop lid, SIGSTOP) until 09:20.
    moments = ["2026-05-28T08:59:30", "2026-05-28T09:20:00", "2026-05-28T09:20:30"]
    assert run_cron("0 9 * * *", moments) == ["2026-05-28T09:20:00"]
    # A process that was not running across the fire does not replay it.
    assert run_cron("0 9 * * *", moments[1:], start_last="2026-05-27T09:00:00") == []


def test_a_wildcard_cron_fires_once_per_minute_after_a_jump_either_way() -> None:
    moments = [
        "2026-05-28T10:00:05",
        "2026-05-28T10:00:50",
        "2026-05-29T10:00:10",
        "2026-05-29T10:00:40",
        "2026-05-27T10:00:10",
        "2026-05-27T10:00:40",
        "2026-05-27T10:01:00",
    ]
    assert run_cron("* * * * *", moments) == [
        "2026-05-28T10:00:05",
        "2026-05-29T10:00:10",
        "2026-05-27T10:00:10",
        "2026-05-27T10:01:00",
    ]


def test_a_cron_set_back_is_next_due_from_now_not_from_the_future_last_run() -> None:
    now = ms("2026-05-27T10:30:00")
    result = schedule_for(
        traits("schedule"), {"cron": "0 * * * *"}, ms("2026-05-28T10:00:05"), now, now - 1_000
    )
    assert not result.due
    assert result.next_poll_ms == ms("2026-05-27T11:00:00") - now
