"""Pace rules driven by a number, never by sleeping."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from agentmonitors.clock import ManualClock, iso_from_ms
from agentmonitors.monitor.model import DebounceNotify, RollupNotify, ThrottleNotify
from agentmonitors.monitor.policy import (
    DebouncePolicy,
    RollupPolicy,
    ThrottlePolicy,
    UrgencyBand,
)
from agentmonitors.runtime.notify import (
    CapturedMonitor,
    Envelope,
    dispatch,
    envelope_for,
    pending_count,
)
from agentmonitors.sources.observation import Observation

START = int(datetime(2026, 12, 2, 10, 0, 0, tzinfo=UTC).timestamp() * 1000)


NORMAL = UrgencyBand("normal", "normal")


def monitor(band: UrgencyBand = NORMAL) -> CapturedMonitor:
    return CapturedMonitor(
        id="docs",
        display_name="docs",
        file_path="/w/.claude/monitors/docs/MONITOR.md",
        instructions="Review the change.",
        source_name="file-fingerprint",
        name=None,
        band=band,
        baseline_strategy="net",
        tags=(),
    )


def env(title: str, now: int, m: CapturedMonitor | None = None, salience: Any = None) -> Envelope:
    return envelope_for(m or monitor(), Observation(title=title, salience=salience), now)


def titles(envelopes: list[Envelope]) -> list[str]:
    return [item.observation.title for item in envelopes]


def debounce(settle: str) -> DebouncePolicy:
    return DebounceNotify.model_validate({"strategy": "debounce", "settle-for": settle}).to_policy()


def throttle(suppress: str) -> ThrottlePolicy:
    return ThrottleNotify.model_validate(
        {"strategy": "throttle", "suppress-for": suppress}
    ).to_policy()


def test_no_notify_emits_immediately() -> None:
    result = dispatch(None, monitor(), [env("a", START), env("b", START)], START, {})
    assert titles(result.emitted) == ["a", "b"]
    assert result.state == {}


def test_debounce_holds_until_quiet_for_settle_window() -> None:
    clock = ManualClock(START)
    config = debounce("10s")
    state: dict[str, Any] = {}
    first = dispatch(config, monitor(), [env("a", clock.now_ms())], clock.now_ms(), state)
    assert first.emitted == []
    assert first.state["pendingDebounce"]["dueAt"] == iso_from_ms(START + 10_000)

    clock.advance(6_000)  # a second change inside the window resets it
    second = dispatch(config, monitor(), [env("b", clock.now_ms())], clock.now_ms(), first.state)
    assert second.emitted == []
    assert pending_count(second.state) == 2
    assert second.state["pendingDebounce"]["dueAt"] == iso_from_ms(START + 16_000)

    clock.advance(9_999)  # one ms short of the new due time
    third = dispatch(config, monitor(), [], clock.now_ms(), second.state)
    assert third.emitted == []

    clock.advance(1)
    fourth = dispatch(config, monitor(), [], clock.now_ms(), third.state)
    assert titles(fourth.emitted) == ["a", "b"]
    assert "pendingDebounce" not in fourth.state
    # The held envelopes keep the time they were observed.
    assert [item.observed_at_ms for item in fourth.emitted] == [START, START + 6_000]


def test_debounce_due_batch_flushes_before_new_observations_join() -> None:
    config = debounce("5s")
    held = dispatch(config, monitor(), [env("a", START)], START, {})
    later = START + 5_000
    result = dispatch(config, monitor(), [env("b", later)], later, held.state)
    assert titles(result.emitted) == ["a"]
    assert pending_count(result.state) == 1
    assert result.state["pendingDebounce"]["dueAt"] == iso_from_ms(later + 5_000)


def test_throttle_emits_first_and_drops_the_rest_until_window_ends() -> None:
    config = throttle("1m")
    first = dispatch(config, monitor(), [env("a", START), env("b", START)], START, {})
    assert titles(first.emitted) == ["a"]
    assert first.state["suppressedUntil"] == iso_from_ms(START + 60_000)

    inside = START + 59_999
    second = dispatch(config, monitor(), [env("c", inside)], inside, first.state)
    assert second.emitted == []
    assert pending_count(second.state) == 0  # dropped, not held

    after = START + 60_000
    third = dispatch(config, monitor(), [env("d", after)], after, second.state)
    assert titles(third.emitted) == ["d"]
    assert third.state["suppressedUntil"] == iso_from_ms(after + 60_000)


def test_high_default_is_a_fifteen_second_settle() -> None:
    high = monitor(UrgencyBand("high", "high"))
    held = dispatch(None, high, [env("a", START, high)], START, {})
    assert held.emitted == []
    assert held.state["pendingDebounce"]["dueAt"] == iso_from_ms(START + 15_000)

    early = START + 14_999
    assert dispatch(None, high, [], early, held.state).emitted == []
    released = dispatch(None, high, [], START + 15_000, held.state)
    assert titles(released.emitted) == ["a"]
    assert released.emitted[0].effective_urgency == "high"


def test_normal_observations_are_not_held_by_the_high_default() -> None:
    band = monitor(UrgencyBand("normal", "high"))
    result = dispatch(
        None, band, [env("n", START, band), env("h", START, band, salience="high")], START, {}
    )
    assert titles(result.emitted) == ["n"]
    assert pending_count(result.state) == 1


def test_escalated_observation_releases_held_batch_in_order() -> None:
    band = monitor(UrgencyBand("normal", "high"))
    config = debounce("10m")
    held = dispatch(config, band, [env("a", START, band), env("b", START, band)], START, {})
    assert held.emitted == []
    later = START + 1_000
    result = dispatch(config, band, [env("deleted", later, band, "high")], later, held.state)
    assert titles(result.emitted) == ["a", "b", "deleted"]
    assert [item.effective_urgency for item in result.emitted] == ["normal", "normal", "high"]
    assert "pendingDebounce" not in result.state


def test_salience_is_clamped_to_the_band_and_scalar_never_escalates() -> None:
    scalar = monitor(UrgencyBand("normal", "normal"))
    clamped = env("x", START, scalar, "high")
    assert clamped.effective_urgency == "normal"
    assert not clamped.escalated
    assert env("y", START, scalar, "low").effective_urgency == "normal"
    band = monitor(UrgencyBand("low", "normal"))
    assert env("z", START, band, "high").effective_urgency == "normal"
    assert env("z", START, band, "high").escalated


def test_rollup_accumulates_and_fires_once_per_window_minute() -> None:
    config = RollupNotify.model_validate({"strategy": "rollup", "window": "0 9 * * *"}).to_policy()
    at_eight = int(datetime(2026, 12, 2, 8, 0, tzinfo=UTC).timestamp() * 1000)
    first = dispatch(config, monitor(), [env("a", at_eight)], at_eight, {})
    assert first.emitted == []
    second = dispatch(
        config, monitor(), [env("b", at_eight + 60_000)], at_eight + 60_000, first.state
    )
    assert pending_count(second.state) == 2

    at_nine = int(datetime(2026, 12, 2, 9, 0, 20, tzinfo=UTC).timestamp() * 1000)
    fired = dispatch(config, monitor(), [], at_nine, second.state)
    assert titles(fired.emitted) == ["a", "b"]
    assert "pendingRollup" not in fired.state
    assert fired.state["rollupLastFiredMinute"] == at_nine // 60_000

    # Same minute again: the guard stops a second flush of newly arrived items.
    again = dispatch(config, monitor(), [env("c", at_nine + 10_000)], at_nine + 10_000, fired.state)
    assert again.emitted == []
    assert pending_count(again.state) == 1


def test_rollup_empty_window_emits_nothing_and_escalation_does_not_flush() -> None:
    band = monitor(UrgencyBand("normal", "high"))
    config = RollupNotify.model_validate({"strategy": "rollup", "window": "0 9 * * *"}).to_policy()
    at_nine = int(datetime(2026, 12, 2, 9, 0, tzinfo=UTC).timestamp() * 1000)
    empty = dispatch(config, band, [], at_nine, {})
    assert empty.emitted == []
    assert empty.state == {"rollupLastFiredMinute": at_nine // 60_000}
    later = at_nine + 3_600_000
    held = dispatch(config, band, [env("deleted", later, band, "high")], later, empty.state)
    assert held.emitted == []
    assert pending_count(held.state) == 1


def test_rollup_honours_its_time_zone() -> None:
    config = RollupNotify.model_validate(
        {"strategy": "rollup", "window": "0 9 * * *", "timezone": "America/New_York"}
    ).to_policy()
    nine_utc = int(datetime(2026, 12, 2, 9, 0, tzinfo=UTC).timestamp() * 1000)
    assert dispatch(config, monitor(), [env("a", nine_utc)], nine_utc, {}).emitted == []
    nine_new_york = int(datetime(2026, 12, 2, 14, 0, tzinfo=UTC).timestamp() * 1000)
    held = dispatch(config, monitor(), [env("a", nine_utc)], nine_utc, {})
    assert titles(dispatch(config, monitor(), [], nine_new_york, held.state).emitted) == ["a"]


@pytest.mark.parametrize(
    ("window", "fires_at", "silent_at"),
    [
        # Fall back: 01:30 happens twice; a fixed-time window flushes on the first pass only.
        ("30 1 * * *", ["2026-11-01T05:30:00"], ["2026-11-01T06:30:00"]),
        # Spring forward: 02:30 never happens; the window flushes when the hour resumes.
        ("30 2 * * *", ["2027-03-14T07:00:00"], ["2027-03-14T06:30:00", "2027-03-14T07:30:00"]),
    ],
)
def test_rollup_windows_on_daylight_saving_days(
    window: str, fires_at: list[str], silent_at: list[str]
) -> None:
    config = RollupNotify.model_validate(
        {"strategy": "rollup", "window": window, "timezone": "America/New_York"}
    ).to_policy()

    def at(text: str) -> int:
        return int(datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp() * 1000)

    for moment in silent_at:
        held = dispatch(config, monitor(), [env("a", at(moment))], at(moment), {})
        assert held.emitted == [], moment
    for moment in fires_at:
        held = dispatch(config, monitor(), [env("a", at(moment) - 60_000)], at(moment) - 60_000, {})
        flushed = dispatch(config, monitor(), [], at(moment), held.state)
        assert titles(flushed.emitted) == ["a"], moment


def test_switching_to_rollup_drops_a_pending_debounce() -> None:
    held = dispatch(debounce("1m"), monitor(), [env("a", START)], START, {})
    config = RollupNotify.model_validate({"strategy": "rollup", "window": "0 3 * * *"}).to_policy()
    result = dispatch(config, monitor(), [], START, held.state)
    assert "pendingDebounce" not in result.state


def test_held_batch_survives_a_json_round_trip_with_its_captured_definition() -> None:
    import json

    captured = CapturedMonitor(
        id="docs",
        display_name="Docs watcher",
        file_path="/w/.claude/monitors/docs/MONITOR.md",
        instructions="Old instructions",
        source_name="file-fingerprint",
        name="Docs watcher",
        band=UrgencyBand("low", "high"),
        baseline_strategy="incremental",
        tags=("docs",),
    )
    held = dispatch(debounce("1m"), captured, [env("a", START, captured, "high")], START, {})
    stored = json.loads(json.dumps(held.state))
    now_monitor = monitor()  # the file has since changed
    released = dispatch(debounce("1m"), now_monitor, [], START + 60_000, stored)
    (envelope,) = released.emitted
    assert envelope.monitor == captured
    assert envelope.effective_urgency == "high"
    assert envelope.observed_at_ms == START


def test_bad_rollup_time_zone_raises_for_isolation() -> None:
    config = RollupPolicy(window="0 9 * * *", timezone="Mars/Base")
    with pytest.raises(ValueError, match="Mars/Base"):
        dispatch(config, monitor(), [], START, {})
