"""``hook.diagnose`` holds and the read-only previews."""

from __future__ import annotations

from typing import Any

from agentmonitors.delivery.vocabulary import REMINDER

from .conftest import SETTLE, World

TI = "turn-interruptible"


def holds(world: World, session: str, lifecycle: str = TI) -> list[dict[str, Any]]:
    report = world.service.diagnose(session, lifecycle)
    assert report["sessionId"] == session and report["lifecycle"] == lifecycle
    result: list[dict[str, Any]] = report["holds"]
    return result


def test_nothing_unread_means_no_holds(world: World) -> None:
    session = world.session()
    assert world.service.diagnose(session, TI) == {
        "sessionId": session,
        "lifecycle": TI,
        "unreadCounts": {"low": 0, "normal": 0, "high": 0, "total": 0},
        "holds": [],
    }


def test_settle_window_for_high_and_for_the_withheld_normal_reminder(world: World) -> None:
    session = world.session()
    world.emit("normal")
    world.emit("high")
    world.advance(4_000)
    world.emit("high", monitor="other")
    world.advance(2_500)
    high, normal = holds(world, session)
    assert high["urgency"] == "high" and high["reason"] == "settle-window"
    assert high["settleRemainingMs"] == SETTLE - 6_500
    assert (high["unreadCount"], high["pendingCount"], high["claimedEventIds"]) == (2, 2, [])
    assert "settle-window" in high["message"]
    assert normal["urgency"] == "normal" and normal["reason"] == "settle-window"
    world.advance(SETTLE)
    assert holds(world, session) == []


def test_already_claimed_then_coalesced_until_ack(world: World) -> None:
    session = world.session()
    first = world.emit("normal")
    world.service.claim(session, TI)
    [hold] = holds(world, session)
    assert hold["reason"] == "already-claimed"
    assert hold["claimedEventIds"] == [first]
    assert (hold["unreadCount"], hold["pendingCount"], hold["leasedCount"]) == (1, 0, 0)
    assert f"--session {session}" in hold["message"]
    world.emit("normal")
    [hold] = holds(world, session)
    assert hold["reason"] == "coalesced-until-ack"
    assert hold["claimedEventIds"] == [first]
    assert (hold["unreadCount"], hold["pendingCount"]) == (2, 1)
    assert "coalesced-until-ack" in hold["message"]
    world.service.ack(session, [first])
    assert holds(world, session) == []


def test_reserved_in_flight_is_never_told_to_ack(world: World) -> None:
    session = world.session()
    world.emit("normal")
    reservation = world.service.reserve(session, TI)
    assert reservation is not None
    [hold] = holds(world, session)
    assert hold["reason"] == "reserved-in-flight"
    assert (hold["leasedCount"], hold["pendingCount"]) == (1, 0)
    assert "claimedEventIds" not in hold
    assert "ack" not in hold["message"]


def test_turn_idle_reports_the_low_band_and_post_compact_nothing(world: World) -> None:
    session = world.session()
    world.emit("low")
    world.emit("normal")
    world.service.claim(session, "turn-idle")
    world.service.claim(session, TI)
    [low] = holds(world, session, "turn-idle")
    assert (low["urgency"], low["reason"]) == ("low", "already-claimed")
    assert holds(world, session, "post-compact") == []


def test_previews_are_read_only(world: World) -> None:
    session = world.session()
    world.emit("normal")
    world.emit("high", "h1", monitor="a")
    world.emit("high", "h2", monitor="b")
    assert world.service.preview(session) == []
    assert world.service.preview_reminder(session) is None
    world.advance(SETTLE)
    preview = world.service.preview(session)
    assert [item["title"] for item in preview] == ["h1", "h2"]
    assert world.service.preview_reminder(session) == REMINDER
    assert world.claimed_ids(session) == set()
    claim = world.service.claim(session, TI, max_events=len(preview))
    assert claim is not None and claim["events"] == preview
    assert world.service.preview_reminder(session) is None


def test_settled_high_events_leased_by_a_reservation_are_reported_in_flight(
    world: World,
) -> None:
    session = world.session()
    world.emit("high", "h1")
    world.advance(SETTLE)
    reservation = world.service.reserve(session, TI)
    assert reservation is not None
    [hold] = holds(world, session)
    assert (hold["urgency"], hold["reason"]) == ("high", "reserved-in-flight")
    assert (hold["unreadCount"], hold["pendingCount"], hold["leasedCount"]) == (1, 0, 1)
    assert "ack" not in hold["message"]
    world.service.release(reservation["reservationId"])
    assert holds(world, session) == []


def test_with_the_hooks_socket_the_diagnosis_names_what_the_cap_defers(world: World) -> None:
    from agentmonitors.delivery.reserve_rendered import reserve_rendered

    session = world.session()
    socket = "/run/agentmonitors/example.sock"
    for index in range(40):
        world.emit("high", f"Build step {index:02d} failed " + "x" * 120, monitor=f"m{index}")
    world.advance(SETTLE)
    # Without the socket nothing is sized: the compatible report (docs/compatibility.md).
    assert holds(world, session) == []
    report = world.service.diagnose(session, TI, socket)
    [hold] = report["holds"]
    assert (hold["urgency"], hold["reason"]) == ("high", "deferred-by-cap")
    assert hold["deferredCount"] + hold["deliverableCount"] == 40
    assert 0 < hold["deliverableCount"] < 40
    assert hold["message"].startswith(f"{hold['deferredCount']} of 40 settled high-urgency")
    assert world.claimed_ids(session) == set()  # read-only

    host = world.rows("SELECT host_session_id FROM agent_sessions WHERE id = ?", session)
    reply = reserve_rendered(world.service, host[0]["host_session_id"], TI, socket_path=socket)
    assert reply["reservation"] is not None and reply["moreDeferred"] is True
    assert len(reply["shownEventIds"]) == hold["deliverableCount"]
    # The other lifecycles are not sized.
    assert world.service.diagnose(session, "turn-idle", socket)["holds"] == []
