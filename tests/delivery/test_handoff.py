"""The one reserve → render → write → commit path, against the real daemon methods."""

from __future__ import annotations

from typing import Any

import pytest

from agentmonitors.delivery.records import RESERVATION_TTL_MS
from agentmonitors.transports.handoff import COMMITTED, LAPSED, NOTHING, UNWRITTEN, hand_off

from .conftest import SETTLE, World
from .test_methods import Ipc


@pytest.fixture
def ipc(world: World) -> Ipc:
    return Ipc(world)


def call(ipc: Ipc) -> Any:
    return lambda method, params: ipc(method, **params)


def reserved(world: World, ipc: Ipc, packer: str = "hook") -> tuple[str, str, Any]:
    """A session with one settled high event, and the daemon's rendered reservation."""
    session = world.session()
    event = world.emit("high")
    world.advance(SETTLE)
    host = world.service.get_session(session)["hostSessionId"]
    method = "delivery.reserveRendered"
    params = {"transport": packer, "hostSessionId": host, "socketPath": "/s.sock"}
    if packer == "hook":
        params["lifecycle"] = "turn-interruptible"
    return session, event, ipc(method, **params)


def test_a_written_delivery_is_committed(world: World, ipc: Ipc) -> None:
    session, event, reply = reserved(world, ipc)
    written: list[str] = []
    outcome = hand_off(call(ipc), reply, lambda text: written.append(text) is None)
    assert outcome == COMMITTED
    assert written == [reply["text"]]
    assert world.claimed_ids(session) == {event}


def test_a_failed_write_releases_so_the_next_delivery_shows_the_same_event(
    world: World, ipc: Ipc
) -> None:
    session, event, reply = reserved(world, ipc)
    assert hand_off(call(ipc), reply, lambda _text: False) == UNWRITTEN
    assert world.claimed_ids(session) == set()
    host = world.service.get_session(session)["hostSessionId"]
    again = ipc(
        "delivery.reserveRendered",
        transport="hook",
        hostSessionId=host,
        lifecycle="turn-interruptible",
        socketPath="/s.sock",
    )
    assert again["shownEventIds"] == [event]  # not withheld by a leftover lease


def test_a_reservation_without_text_is_released_and_nothing_is_written(
    world: World, ipc: Ipc
) -> None:
    session, _event, reply = reserved(world, ipc)
    written: list[str] = []
    blank = {**reply, "text": ""}
    assert hand_off(call(ipc), blank, lambda text: written.append(text) is None) == NOTHING
    assert written == []
    assert world.service.reservations.leased(session) == frozenset()
    assert hand_off(call(ipc), {"session": None}, lambda _text: True) == NOTHING


def test_a_commit_after_the_lease_lapsed_leaves_the_rows_pending(world: World, ipc: Ipc) -> None:
    session, event, reply = reserved(world, ipc)

    def slow_write(_text: str) -> bool:
        world.advance(RESERVATION_TTL_MS + 1)
        return True

    assert hand_off(call(ipc), reply, slow_write) == LAPSED
    assert world.claimed_ids(session) == set()
    assert event in world.unread_ids(session)


def test_a_channel_commits_through_its_own_step(world: World, ipc: Ipc) -> None:
    """A push is not claimed when sent: it waits for proof, reported through ``commit``."""
    session, event, reply = reserved(world, ipc, packer="channel")
    sent: list[str] = []

    def report_sent(delivery_id: str) -> bool:
        sent.append(delivery_id)
        return bool(ipc("channel.sent", deliveryId=delivery_id)["ok"])

    assert hand_off(call(ipc), reply, lambda _text: True, commit=report_sent) == COMMITTED
    assert sent == [reply["deliveryId"]]
    assert world.claimed_ids(session) == set()  # still waiting for the host's proof
    assert world.service.reservations.leased(session) == frozenset({event})
