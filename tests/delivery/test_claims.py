"""Claim decisions per lifecycle, the coalesced-until-ack guard, and claim ≠ ack."""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

from agentmonitors.delivery.vocabulary import REMINDER
from agentmonitors.monitor.model import UrgencyBand, UrgencyLevel

from .conftest import SETTLE, START, World, event_ids

TI = "turn-interruptible"


def counts(low: int = 0, normal: int = 0, high: int = 0) -> dict[str, int]:
    return {"low": low, "normal": normal, "high": high, "total": low + normal + high}


def test_high_is_delivered_only_after_the_settle_window(world: World) -> None:
    session = world.session()
    event = world.emit("high", "Config drifted", summary="config.yml changed")
    world.advance(SETTLE - 1)
    assert world.service.claim(session, TI) is None
    world.advance(1)
    claim = world.service.claim(session, TI)
    assert claim == {
        "sessionId": session,
        "mode": "delivery",
        "urgency": "high",
        "lifecycle": TI,
        "message": "1. config.yml changed",
        "unreadCounts": counts(high=1),
        "events": [
            {
                "eventId": event,
                "monitorId": "build",
                "title": "Config drifted",
                "summary": "config.yml changed",
                "objectDetail": "config.yml changed",
                "urgency": "high",
                "createdAt": "2026-05-28T20:26:40.000Z",
                "body": "Handle build.",
            }
        ],
    }
    assert world.service.claim(session, TI) is None


def test_claiming_never_acknowledges(world: World) -> None:
    session = world.session()
    event = world.emit("high")
    world.advance(SETTLE)
    world.service.claim(session, TI)
    row = world.state(session, event)
    assert row["first_notified_at"] == (START + SETTLE) // 1000
    assert row["acknowledged_at"] is None
    assert row["last_claim_lifecycle"] == TI
    assert world.unread_ids(session) == [event]
    assert world.service.hook_state(session)["unread"] == counts(high=1)


def test_claimed_set_is_exactly_the_shown_set_so_the_ack_line_covers_it(world: World) -> None:
    session = world.session()
    first = world.emit("high", "one", monitor="a")
    second = world.emit("high", "two", monitor="b")
    world.emit("low", "quiet", monitor="c")
    world.advance(SETTLE)
    claim = world.service.claim(session, TI)
    shown = event_ids(claim)
    assert shown == [first, second]
    assert world.claimed_ids(session) == set(shown)
    world.service.ack(session, shown)
    assert world.service.hook_state(session)["unread"] == counts(low=1)


def test_normal_reminder_is_coalesced_until_ack(world: World) -> None:
    session = world.session()
    first = world.emit("normal", "n1")
    claim = world.service.claim(session, TI)
    assert claim is not None
    assert (claim["urgency"], claim["events"], claim["message"]) == ("normal", [], REMINDER)
    assert "coalescedReminder" not in claim
    assert world.claimed_ids(session) == {first}
    # A second identical claim stays quiet, and so does a new normal event.
    assert world.service.claim(session, TI) is None
    second = world.emit("normal", "n2")
    assert world.service.claim(session, TI) is None
    # Acknowledging the claimed row re-arms the reminder for what is still unread.
    world.service.ack(session, [first])
    again = world.service.claim(session, TI)
    assert again is not None and again["message"] == REMINDER
    assert again["unreadCounts"] == counts(normal=1)
    assert world.claimed_ids(session) == {first, second}


def test_a_high_only_claim_does_not_mute_the_normal_reminder(world: World) -> None:
    session = world.session()
    world.emit("high")
    world.advance(SETTLE)
    assert world.service.claim(session, TI) is not None  # claimed, not acknowledged
    world.emit("normal")
    claim = world.service.claim(session, TI)
    assert claim is not None and claim["urgency"] == "normal"


def test_a_recap_that_claimed_normal_rows_mutes_the_reminder(world: World) -> None:
    session = world.session()
    world.emit("normal")
    assert world.service.claim(session, "post-compact") is not None
    assert world.service.claim(session, TI) is None
    world.emit("normal")
    assert world.service.claim(session, TI) is None


def test_a_due_normal_reminder_folds_into_a_settled_high_batch(world: World) -> None:
    session = world.session()
    normal = [world.emit("normal", "n1", monitor="n"), world.emit("normal", "n2", monitor="m")]
    high = world.emit("high", "Deploy failed", monitor="deploy")
    world.advance(SETTLE)
    claim = world.service.claim(session, TI)
    assert claim is not None
    assert claim["urgency"] == "high"
    assert event_ids(claim) == [high]
    assert claim["message"] == f"1. Deploy failed\n\n{REMINDER}"
    assert claim["coalescedReminder"] == REMINDER
    assert claim["coalescedNormalCount"] == 2
    assert claim["unreadCounts"] == counts(normal=2, high=1)
    assert world.claimed_ids(session) == {high, *normal}
    assert list(claim)[-2:] == ["coalescedReminder", "coalescedNormalCount"]


def test_a_muted_normal_band_does_not_fold_into_a_high_batch(world: World) -> None:
    session = world.session()
    world.emit("normal")
    world.service.claim(session, TI)  # reminder fired, not acked
    pending_normal = world.emit("normal")
    world.emit("high")
    world.advance(SETTLE)
    claim = world.service.claim(session, TI)
    assert claim is not None and "coalescedReminder" not in claim
    assert pending_normal not in world.claimed_ids(session)


def test_the_normal_reminder_is_withheld_while_high_work_is_unsettled(world: World) -> None:
    session = world.session()
    normal = world.emit("normal")
    world.advance(5_000)
    world.emit("high")
    assert world.service.claim(session, TI) is None
    assert world.claimed_ids(session) == set()
    world.advance(SETTLE)
    claim = world.service.claim(session, TI)
    assert claim is not None and claim["coalescedNormalCount"] == 1
    assert normal in world.claimed_ids(session)


def test_turn_idle_sends_one_low_reminder(world: World) -> None:
    session = world.session()
    low = world.emit("low")
    assert world.service.claim(session, TI) is None  # low never interrupts a turn
    claim = world.service.claim(session, "turn-idle")
    assert claim is not None
    assert (claim["urgency"], claim["lifecycle"], claim["message"]) == (
        "low",
        "turn-idle",
        REMINDER,
    )
    assert claim["events"] == []
    assert world.claimed_ids(session) == {low}
    world.emit("low")
    assert world.service.claim(session, "turn-idle") is None
    # turn-idle never surfaces high or normal work.
    other = world.session("other")
    world.emit("high")
    world.emit("normal")
    world.advance(SETTLE)
    assert world.service.claim(other, "turn-idle") is None


def test_post_compact_recaps_the_ten_newest_and_claims_every_unread_row(world: World) -> None:
    session = world.session()
    ids = []
    for index in range(12):
        ids.append(world.emit(("low", "normal", "high")[index % 3], f"e{index}"))
        world.advance(1_000)
    early = world.service.claim(session, "turn-idle")  # claims the low rows first
    assert early is not None
    first_claims = {row: world.state(session, row)["first_notified_at"] for row in ids[::3]}
    world.advance(60_000)
    claim = world.service.claim(session, "post-compact")
    assert claim is not None
    assert claim["mode"] == "recap" and "urgency" not in claim
    assert event_ids(claim) == ids[2:]
    assert claim["unreadCounts"] == counts(low=4, normal=4, high=4)
    lines = claim["message"].split("\n")
    assert lines[0] == "Recap of recent AgentMon activity since your last recap:"
    assert lines[1:11] == [f"{n}. e{n + 1}" for n in range(1, 11)]
    assert lines[11:] == [
        "… and 2 older unread not listed here.",
        f"Run `agentmonitors events list --session {session}` for recent history.",
        f"Run `agentmonitors events list --session {session} --unread` for unread details.",
    ]
    assert world.claimed_ids(session) == set(ids)
    # A re-claim keeps the first claim time.
    for row, first in first_claims.items():
        assert world.state(session, row)["first_notified_at"] == first
        assert world.state(session, row)["last_claim_lifecycle"] == "post-compact"
    record = world.service.get_session(session)
    assert record["lastRecapAt"] == record["lastActiveAt"]
    # Nothing acknowledged: the next recap shows them again.
    assert event_ids(world.service.claim(session, "post-compact")) == ids[2:]


def test_max_events_keeps_the_oldest_groups_and_leaves_the_rest_pending(world: World) -> None:
    session = world.session()
    ids = [world.emit("high", f"h{n}", monitor=f"m{n}") for n in range(3)]
    world.advance(SETTLE)
    assert event_ids(world.service.claim(session, TI, max_events=2)) == ids[:2]
    assert world.claimed_ids(session) == set(ids[:2])
    assert event_ids(world.service.claim(session, TI, max_events=0)) == ids[2:]


def test_net_collapse_delivers_the_endpoint_and_rediffs_it_from_the_cursor(world: World) -> None:
    session = world.session()

    def emit(level: UrgencyLevel, text: str) -> str:
        return world.emit(
            salience=level,
            title=text,
            snapshot=text,
            monitor="doc",
            strategy="net",
            object_key="doc.md",
            band=UrgencyBand("low", "high"),
        )

    # Nothing is stored before v0: the session has no version to diff from, so it gets
    # no cursor (a cursor at v0 would call v0 itself "no difference").
    v0 = emit("low", "v0")
    v1 = emit("low", "v1")
    v2 = emit("high", "v2")
    v3 = emit("high", "v3")
    assert world.state(session, v3)["diff_text"] == "- 1: v2\n+ 1: v3"
    assert world.rows("SELECT * FROM session_object_cursor WHERE session_id = ?", session) == []
    # The low claim collapses v0 into v1; a reminder shows neither, so no base is set.
    assert world.service.claim(session, "turn-idle") is not None
    assert world.state(session, v0)["net_suppressed_at"] is not None
    assert world.rows("SELECT * FROM session_object_cursor WHERE session_id = ?", session) == []
    world.advance(SETTLE)
    claim = world.service.claim(session, TI)
    assert event_ids(claim) == [v3]
    # The catch-up span has no version the session saw to start from: no diff at all.
    assert claim is not None and "diffText" not in claim["events"][0]
    suppressed = world.state(session, v2)
    assert suppressed["net_suppressed_at"] is not None
    assert suppressed["first_notified_at"] is not None
    assert world.unread_ids(session) == [v3, v1]
    cursor = world.rows("SELECT * FROM session_object_cursor WHERE session_id = ?", session)
    assert [(c["baseline_snapshot_id"], c["baseline_content"]) for c in cursor] == [(v3, "v3")]
    assert world.service.hook_state(session)["unread"] == counts(low=1, high=1)


def test_the_catch_up_diff_starts_at_what_the_session_saw_not_at_a_reminder(
    world: World,
) -> None:
    session = world.session()

    def emit(level: UrgencyLevel, text: str) -> str:
        return world.emit(
            salience=level,
            title=text,
            snapshot=text,
            monitor="doc",
            strategy="net",
            object_key="doc.md",
            band=UrgencyBand("low", "high"),
        )

    v0 = emit("high", "v0")
    world.advance(SETTLE)
    assert event_ids(world.service.claim(session, TI)) == [v0]  # shown: the base is v0
    emit("low", "v1")
    assert world.service.claim(session, "turn-idle") is not None  # a reminder, not shown
    emit("high", "v2")
    world.advance(SETTLE)
    claim = world.service.claim(session, TI)
    assert claim is not None and claim["events"][0]["diffText"] == "- 1: v0\n+ 1: v2"


def test_incremental_events_are_never_collapsed(world: World) -> None:
    session = world.session()
    ids = [world.emit("high", f"v{n}", snapshot=f"v{n}", object_key="doc") for n in range(3)]
    world.advance(SETTLE)
    assert event_ids(world.service.claim(session, TI)) == ids


def test_two_concurrent_claims_never_surface_the_same_row(world: World) -> None:
    sessions = [world.session("a")]
    for n in range(40):
        world.emit("high", f"h{n}", monitor=f"m{n % 7}")
    world.emit("normal", "n")
    world.advance(SETTLE)
    barrier = threading.Barrier(8)
    results: list[Any] = []
    lock = threading.Lock()

    def claim() -> None:
        barrier.wait()
        for _ in range(5):
            got = world.service.claim(sessions[0], TI, max_events=3)
            with lock:
                results.append(got)

    threads = [threading.Thread(target=claim) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    shown = Counter(e for claim in results if claim is not None for e in event_ids(claim))
    assert len(shown) == 40 and set(shown.values()) == {1}
    reminders = [c for c in results if c is not None and c.get("coalescedReminder")]
    assert len(reminders) == 1
