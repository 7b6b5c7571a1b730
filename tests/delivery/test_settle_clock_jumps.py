"""A settled high event is claimable whatever the wall clock did since it was stored."""

from __future__ import annotations

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
