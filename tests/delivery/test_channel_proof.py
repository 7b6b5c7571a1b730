"""Channel pushes are committed only on proof; the hook path is never starved by them."""

from __future__ import annotations

from typing import Any

from agentmonitors.clock import ManualClock
from agentmonitors.delivery.pushes import MAX_REMEMBERED_PUSHES, PUSH_MEMORY_MS, PushLedger
from agentmonitors.delivery.reserve_rendered import reserve_rendered

from .conftest import SETTLE, World

SOCKET = "/tmp/agentmonitors-test.sock"


def push(world: World, host: str = "host-1") -> dict[str, Any]:
    """What ``delivery.reserveRendered`` answers a channel, then the channel reports it sent."""
    reply = reserve_rendered(
        world.service, host, "turn-interruptible", socket_path=SOCKET, transport="channel"
    )
    if reply.get("reservation") is not None:
        assert world.service.channel_sent(reply["deliveryId"])
    return reply


def hook(world: World, host: str = "host-1", ids: list[str] | None = None) -> dict[str, Any]:
    return reserve_rendered(
        world.service, host, "turn-interruptible", socket_path=SOCKET, channel_delivery_ids=ids
    )


def high_event(world: World, title: str = "Deploy failed") -> str:
    event = world.emit("high", title)
    world.advance(SETTLE)
    return event


def test_a_push_carries_meta_with_its_delivery_id_and_holds_the_rows(world: World) -> None:
    session = world.session()
    event = high_event(world)
    reply = push(world)
    assert reply["meta"]["delivery_id"] == reply["deliveryId"]
    assert reply["meta"]["event_id"] == event
    assert "Deploy failed" in reply["text"]
    # Held, not claimed: nobody has seen it yet.
    assert world.claimed_ids(session) == set()
    assert world.service.preview(session) == []


def test_the_channel_turn_proves_the_push(world: World) -> None:
    session = world.session()
    event = high_event(world)
    delivery = push(world)["deliveryId"]
    reply = hook(world, ids=[delivery])
    assert reply["confirmedDeliveryIds"] == [delivery]
    assert reply["reservation"] is None  # nothing else to show
    assert world.claimed_ids(session) == {event}
    assert world.service.channel_status(session)["confirmed"] is True
    # Proving twice changes nothing.
    assert hook(world, ids=[delivery])["confirmedDeliveryIds"] == []


def test_a_proof_for_another_session_or_an_unknown_id_is_ignored(world: World) -> None:
    world.session("host-1")
    other = world.session("host-2")
    high_event(world)
    delivery = push(world, "host-1")["deliveryId"]
    assert hook(world, "host-2", ids=[delivery, "nonsense"])["confirmedDeliveryIds"] == []
    assert world.service.channel_status(other)["confirmed"] is False


def test_without_proof_the_hook_takes_over_and_pushes_stop(world: World) -> None:
    session = world.session()
    event = high_event(world)
    assert push(world)["reservation"] is not None
    reply = hook(world)
    assert reply["reservation"]["claim"]["events"][0]["eventId"] == event
    world.service.commit(reply["reservation"]["reservationId"])
    assert world.claimed_ids(session) == {event}

    second = high_event(world, "Deploy failed again")
    held = push(world)
    assert held["reservation"] is None and held["held"] == "awaiting-proof"
    assert hook(world)["reservation"]["claim"]["events"][0]["eventId"] == second


def test_a_late_proof_claims_what_is_still_unclaimed_and_resumes_pushes(world: World) -> None:
    session = world.session()
    event = high_event(world)
    delivery = push(world)["deliveryId"]
    world.advance(31_000)  # the lease lapsed: the row is deliverable again
    assert [item["eventId"] for item in world.service.preview(session)] == [event]
    hook(world, ids=[delivery])
    assert world.claimed_ids(session) == {event}
    high_event(world, "Another")
    assert push(world)["reservation"] is not None


def test_a_confirmed_session_keeps_its_channel_leases_from_the_hooks(world: World) -> None:
    session = world.session()
    high_event(world)
    hook(world, ids=[push(world)["deliveryId"]])
    event = high_event(world, "Second")
    delivery = push(world)["deliveryId"]
    # A tool call in the running turn does not steal the push the host will show.
    assert hook(world)["reservation"] is None
    hook(world, ids=[delivery])
    assert event in world.claimed_ids(session)


def test_acking_the_pushed_events_proves_the_push(world: World) -> None:
    session = world.session()
    event = high_event(world)
    push(world)
    world.service.ack(session, [event])
    state = world.state(session, event)
    assert state["first_notified_at"] is not None and state["acknowledged_at"] is not None
    assert world.service.channel_status(session)["confirmed"] is True


def test_ack_all_leaves_the_pushed_rows_and_proves_nothing(world: World) -> None:
    session = world.session()
    event = high_event(world)
    push(world)
    world.service.ack(session)
    assert world.state(session, event)["acknowledged_at"] is None
    assert world.service.channel_status(session)["confirmed"] is False


def test_an_ack_after_the_lease_lapsed_is_no_proof(world: World) -> None:
    session = world.session()
    event = high_event(world)
    push(world)
    world.advance(31_000)
    world.service.ack(session, [event])
    assert world.service.channel_status(session)["confirmed"] is False


def test_a_released_push_is_forgotten(world: World) -> None:
    session = world.session()
    high_event(world)
    reply = reserve_rendered(
        world.service, "host-1", "turn-interruptible", socket_path=SOCKET, transport="channel"
    )
    world.service.release(reply["deliveryId"])
    assert world.service.channel_status(session) == {
        "confirmed": False,
        "awaitingProof": False,
        "pushes": 0,
    }
    assert push(world)["reservation"] is not None  # never sent, so no hold


def test_the_ledger_forgets_old_pushes() -> None:
    clock = ManualClock()
    ledger = PushLedger(clock)
    ledger.record("old", "s1", frozenset({"e1"}))
    clock.advance(PUSH_MEMORY_MS + 1)
    ledger.record("new", "s1", frozenset({"e2"}))
    assert ledger.get("old") is None and ledger.get("new") is not None
    for index in range(MAX_REMEMBERED_PUSHES + 5):
        ledger.record(f"d{index}", "s2", frozenset())
    assert ledger.get("new") is None
    assert ledger.get(f"d{MAX_REMEMBERED_PUSHES + 4}") is not None
