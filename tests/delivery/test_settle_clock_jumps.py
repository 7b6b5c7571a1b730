"""A settled high event is claimable, and a lease runs out, whatever the wall clock did."""

from __future__ import annotations

from agentmonitors.delivery.records import RESERVATION_TTL_MS

from .conftest import SETTLE, START, World, event_ids

TI = "turn-interruptible"
DAY = 86_400_000


def test_a_clock_set_back_a_day_does_not_hold_a_high_event_for_a_day(world: World) -> None:
    session = world.session()
    event = world.emit("high", "Deploy failed")
    world.clock.set(START + 2_000 - DAY)  # stored "in the future" now
    assert event_ids(world.service.claim(session, TI)) == [event]
    assert world.service.claim(session, TI) is None


def test_a_clock_that_runs_on_still_waits_out_the_window(world: World) -> None:
    session = world.session()
    event = world.emit("high", "Deploy failed")
    world.advance(SETTLE - 1)
    assert world.service.claim(session, TI) is None
    world.advance(1)
    assert event_ids(world.service.claim(session, TI)) == [event]


def test_a_lease_made_before_the_clock_is_set_back_runs_out_within_its_ttl(world: World) -> None:
    session = world.session()
    event = world.emit("high")
    world.advance(SETTLE)
    reservation = world.service.reserve(session, TI)
    assert reservation is not None
    world.clock.set(world.clock.now_ms() - DAY)
    assert world.service.claim(session, TI) is None  # still leased
    world.advance(RESERVATION_TTL_MS)
    assert event_ids(world.service.claim(session, TI)) == [event]
