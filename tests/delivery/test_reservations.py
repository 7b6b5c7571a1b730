"""Reservations lease rows for 30 s without writing; commit applies the stored plan."""

from __future__ import annotations

from agentmonitors.delivery.vocabulary import REMINDER

from .conftest import SETTLE, World, event_ids

TI = "turn-interruptible"
TTL = 30_000


def test_reserve_leases_without_writing_and_commit_claims(world: World) -> None:
    session = world.session()
    event = world.emit("high", "h")
    world.advance(SETTLE)
    reservation = world.service.reserve(session, TI)
    assert reservation is not None
    assert set(reservation) == {"reservationId", "claim"}
    assert event_ids(reservation["claim"]) == [event]
    assert world.claimed_ids(session) == set()  # nothing written yet
    # Leased rows are hidden from claims, previews and the hook-state pending flags …
    assert world.service.claim(session, TI) is None
    assert world.service.preview(session) == []
    state = world.service.hook_state(session)
    assert state["hasPendingHigh"] is False and state["latestHighTitles"] == []
    # … but still unread.
    assert world.unread_ids(session) == [event]
    assert state["unread"]["high"] == 1
    committed = world.service.commit(reservation["reservationId"])
    assert committed == reservation["claim"]
    assert world.claimed_ids(session) == {event}
    assert world.service.commit(reservation["reservationId"]) is None  # only once


def test_commit_applies_the_stored_plan_without_deciding_again(world: World) -> None:
    session = world.session()
    world.emit("high", "h1")
    world.advance(SETTLE)
    reservation = world.service.reserve(session, TI)
    assert reservation is not None
    late = world.emit("high", "h2")
    world.advance(SETTLE)
    committed = world.service.commit(reservation["reservationId"])
    assert committed == reservation["claim"]
    assert late not in world.claimed_ids(session)
    assert event_ids(world.service.claim(session, TI)) == [late]


def test_release_returns_the_rows_to_pending(world: World) -> None:
    session = world.session()
    event = world.emit("normal")
    reservation = world.service.reserve(session, TI)
    assert reservation is not None and reservation["claim"]["message"] == REMINDER
    world.service.release(reservation["reservationId"])
    world.service.release("unknown")  # harmless
    assert world.service.commit(reservation["reservationId"]) is None
    assert world.claimed_ids(session) == set()
    claim = world.service.claim(session, TI)
    assert claim is not None and world.claimed_ids(session) == {event}


def test_leases_expire_after_thirty_seconds(world: World) -> None:
    session = world.session()
    event = world.emit("high")
    world.advance(SETTLE)
    reservation = world.service.reserve(session, TI)
    assert reservation is not None
    world.advance(TTL - 1)
    assert world.service.claim(session, TI) is None
    world.advance(1)
    assert event_ids(world.service.claim(session, TI)) == [event]


def test_commit_after_expiry_is_null_and_the_rows_are_pending_again(world: World) -> None:
    session = world.session()
    event = world.emit("high")
    world.advance(SETTLE)
    reservation = world.service.reserve(session, TI)
    assert reservation is not None
    world.advance(TTL)
    assert world.service.commit(reservation["reservationId"]) is None
    assert world.claimed_ids(session) == set()
    assert world.service.hook_state(session)["hasPendingHigh"] is True
    assert event_ids(world.service.claim(session, TI)) == [event]


def test_ack_all_skips_leased_rows_but_explicit_ids_do_not(world: World) -> None:
    session = world.session()
    leased = world.emit("high", "h")
    world.advance(SETTLE)
    reservation = world.service.reserve(session, TI)
    assert reservation is not None
    other = world.emit("low", "l")
    world.service.ack(session)
    assert world.state(session, other)["acknowledged_at"] is not None
    assert world.state(session, leased)["acknowledged_at"] is None
    assert world.unread_ids(session) == [leased]
    world.service.ack(session, [leased])
    assert world.unread_ids(session) == []


def test_a_leased_normal_row_holds_the_reminder_and_a_recap_still_shows_it(world: World) -> None:
    session = world.session()
    event = world.emit("normal")
    reservation = world.service.reserve(session, TI)
    assert reservation is not None
    assert world.service.claim(session, TI) is None
    recap = world.service.claim(session, "post-compact")
    assert event_ids(recap) == [event]


def test_leases_are_per_session(world: World) -> None:
    first, second = world.session("a"), world.session("b")
    event = world.emit("high")
    world.advance(SETTLE)
    assert world.service.reserve(first, TI) is not None
    assert event_ids(world.service.claim(second, TI)) == [event]
