"""Net collapse of a create-then-edit: shown as the creation, and nothing left behind."""

from __future__ import annotations

from agentmonitors.delivery import states
from agentmonitors.delivery.collapse import collapse_view
from agentmonitors.delivery.events import EventQuery
from agentmonitors.monitor.model import UrgencyLevel
from tests.delivery.conftest import SETTLE, World, event_ids

TI = "turn-interruptible"
PATH = "/ws/notes.md"


def emit_file(world: World, kind: str, content: str, urgency: UrgencyLevel = "high") -> str:
    label = {"created": "File created", "modified": "File changed"}[kind]
    return world.emit(
        urgency,
        title=f"{label}: {PATH}",
        summary=f"{label}: {PATH}",
        snapshot=content,
        monitor="notes",
        strategy="net",
        object_key=PATH,
        scope={"filePath": PATH, "changeKind": kind},
    )


def unacknowledged(world: World, session: str) -> list[str]:
    return [
        str(row["event_id"])
        for row in world.rows(
            "SELECT event_id FROM session_event_state WHERE session_id = ?"
            " AND acknowledged_at IS NULL",
            session,
        )
    ]


def test_a_file_created_then_edited_is_shown_as_created_with_its_whole_content(
    world: World,
) -> None:
    session = world.session()
    created = emit_file(world, "created", "# Notes\n")
    edited = emit_file(world, "modified", "# Notes\nfirst point\n")
    world.advance(SETTLE)
    claim = world.service.claim(session, TI)
    assert event_ids(claim) == [edited]
    assert claim is not None
    (shown,) = claim["events"]
    assert shown["title"] == f"File created: {PATH}"
    assert shown["summary"] == f"File created: {PATH}"
    # The whole file as it now is, not a diff against "# Notes" the agent never saw.
    assert shown["diffText"] == "+ 1: # Notes\n+ 2: first point"
    assert claim["message"] == f"1. File created: {PATH}"
    assert world.state(session, created)["net_suppressed_at"] is not None


def test_acknowledging_the_survivor_acknowledges_the_row_folded_into_it(world: World) -> None:
    session = world.session()
    created = emit_file(world, "created", "a\n")
    edited = emit_file(world, "modified", "a\nb\n")
    world.advance(SETTLE)
    assert event_ids(world.service.claim(session, TI)) == [edited]
    assert world.service.ack(session, [edited]) == []
    assert unacknowledged(world, session) == []
    assert world.state(session, created)["acknowledged_at"] is not None
    states = {
        record["id"]: record["deliveryState"]
        for record in world.service.list_events(EventQuery(session_id=session))
    }
    assert states == {created: "acknowledged", edited: "acknowledged"}


def test_ack_all_clears_folded_rows_and_the_reminder_speaks_again(world: World) -> None:
    session = world.session()
    emit_file(world, "created", "a\n", urgency="normal")
    emit_file(world, "modified", "a\nb\n", urgency="normal")
    reminder = world.service.claim(session, TI)
    assert reminder is not None and reminder["urgency"] == "normal"
    assert world.service.ack(session) == []
    assert unacknowledged(world, session) == []
    emit_file(world, "modified", "a\nb\nc\n", urgency="normal")
    again = world.service.claim(session, TI)
    assert again is not None and again["urgency"] == "normal"


def test_ack_all_clears_a_folded_row_an_older_version_left_claimed(world: World) -> None:
    session = world.session()
    created = emit_file(world, "created", "a\n")
    edited = emit_file(world, "modified", "a\nb\n")
    world.advance(SETTLE)
    world.service.claim(session, TI)
    # What a database written before this fix holds: the survivor acknowledged alone.
    with world.db.write() as conn:
        conn.execute(
            "UPDATE session_event_state SET acknowledged_at = 1 WHERE event_id = ?", (edited,)
        )
    assert unacknowledged(world, session) == [created]
    world.service.ack(session)
    assert unacknowledged(world, session) == []


def test_a_creation_already_shown_is_diffed_from_what_the_agent_saw(world: World) -> None:
    session = world.session()
    created = emit_file(world, "created", "a\n")
    world.advance(SETTLE)
    assert event_ids(world.service.claim(session, TI)) == [created]
    edited = emit_file(world, "modified", "a\nb\n")
    recap = world.service.claim(session, "post-compact")
    assert recap is not None
    (shown,) = recap["events"]
    assert shown["eventId"] == edited
    assert shown["title"] == f"File changed: {PATH}"
    assert "+ 1: a" not in shown.get("diffText", "")
    world.service.ack(session, [edited])
    assert unacknowledged(world, session) == []


def test_a_capped_claim_takes_every_version_of_the_groups_it_surfaces_and_no_other(
    world: World,
) -> None:
    session = world.session()

    def net(key: str, text: str) -> str:
        world.advance(1000)
        return world.emit(
            "high", f"{key} changed", snapshot=text, monitor="docs", strategy="net", object_key=key
        )

    a1 = net("a.md", "1\n")
    b1 = net("b.md", "1\n")
    a2 = net("a.md", "2\n")
    world.advance(1000)
    single = world.emit("high", "tests failed", monitor="tests")
    b2 = net("b.md", "2\n")
    a3 = net("a.md", "3\n")
    world.advance(SETTLE)
    # Groups surface in the order of their newest version: the single, b.md, a.md.
    assert [event["eventId"] for event in world.service.preview(session)] == [single, b2, a3]
    assert event_ids(world.service.claim(session, TI, 1)) == [single]
    assert world.claimed_ids(session) == {single}
    assert event_ids(world.service.claim(session, TI, 1)) == [b2]
    assert world.claimed_ids(session) == {single, b1, b2}
    assert world.state(session, b1)["net_suppressed_at"] is not None
    assert world.state(session, a1)["net_suppressed_at"] is None
    assert event_ids(world.service.claim(session, TI, 1)) == [a3]
    assert world.claimed_ids(session) == {single, b1, b2, a1, a2, a3}
    assert world.unread_ids(session) == [a3, b2, single]


def test_the_survivor_is_the_newest_version_whatever_order_the_rows_come_in(
    world: World,
) -> None:
    session = world.session()
    first = emit_file(world, "created", "1\n")
    world.advance(1000)
    single = world.emit("high", "tests failed", monitor="tests")
    world.advance(1000)
    second = emit_file(world, "modified", "2\n")
    world.advance(1000)
    third = emit_file(world, "modified", "3\n")
    with world.db.read() as conn:
        rows = states.unread_rows(conn, session)
    forward, backward = collapse_view(rows), collapse_view(rows[::-1])
    assert [row.id for row in forward.delivered] == [single, third]
    assert [row.id for row in backward.delivered] == [third, single]
    for view in (forward, backward):
        assert {row.id for row in view.suppressed} == {first, second}
        # Shown as the creation it started with, wherever that row stood.
        assert view.as_created == {third}
        assert [row.event.title for row in view.multi_survivors] == [f"File created: {PATH}"]
