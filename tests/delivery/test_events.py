"""``events.list`` filters and delivery states, and ``events.ack`` scoping."""

from __future__ import annotations

from typing import Any

import pytest

from agentmonitors.clock import iso_from_ms
from agentmonitors.delivery.events import EventQuery
from agentmonitors.delivery.records import SessionNotFound

from .conftest import START, World


def listed(world: World, **options: Any) -> list[str]:
    return [str(r["id"]) for r in world.service.list_events(EventQuery(**options))]


def test_records_have_the_reference_shape_and_newest_first_order(world: World) -> None:
    session = world.session()
    first = world.emit("normal", "one", tags=("ci",), scope={"branch": "main"})
    second = world.emit("normal", "two")  # same second: the id breaks the tie
    records = world.service.list_events(EventQuery())
    assert [r["id"] for r in records] == [second, first]
    assert records[1] == {
        "id": first,
        "workspacePath": world.workspace,
        "monitorId": "build",
        "sourceName": "scripted",
        "urgency": "normal",
        "title": "one",
        "body": "Handle build.",
        "summary": "one",
        "payload": {},
        "snapshotMetadata": {},
        "snapshotText": None,
        "diffText": None,
        "objectKey": "build",
        "baselineStrategy": "incremental",
        "queryScope": {"branch": "main"},
        "tags": ["ci"],
        "createdAt": iso_from_ms(START),
    }
    scoped = world.service.list_events(EventQuery(session_id=session))
    assert [r["deliveryState"] for r in scoped] == ["unread", "unread"]
    assert list(scoped[0])[-1] == "deliveryState"


def test_delivery_state_per_session(world: World) -> None:
    session = world.session()
    claimed = world.emit("normal", "c", monitor="a")
    world.service.claim(session, "turn-interruptible")
    acked = world.emit("low", "k", monitor="b")
    world.service.ack(session, [acked])
    unread = world.emit("low", "u", monitor="c")
    states = {
        r["id"]: r["deliveryState"]
        for r in world.service.list_events(EventQuery(session_id=session))
    }
    assert states == {claimed: "claimed", acked: "acknowledged", unread: "unread"}
    assert listed(world, session_id=session, unread_only=True) == [unread, claimed]


def test_filters(world: World) -> None:
    session = world.session()
    a = world.emit("high", monitor="a", tags=("ci", "prod"), scope={"labels": ["x", "y"]})
    b = world.emit("normal", monitor="b", tags=("ci",), scope={"labels": "x"}, object_key="k")
    world.advance(2_000)
    c = world.emit("low", monitor="a", scope={"team": "core"})
    assert listed(world, monitor_id="a") == [c, a]
    assert listed(world, urgency="normal") == [b]
    assert listed(world, tags=("ci",)) == [b, a]
    assert listed(world, tags=("ci", "prod")) == [a]
    assert listed(world, scope={"labels": "x"}) == [b, a]
    assert listed(world, scope={"labels": "y"}) == [a]
    assert listed(world, scope={"labels": "x", "team": "core"}) == []
    assert listed(world, object_key="k") == [b]
    assert listed(world, since_ms=START) == [c]
    assert listed(world, since_ms=START - 1) == [c, b, a]
    assert listed(world, session_id=session, monitor_id="a", urgency="low") == [c]


def test_since_baseline_and_session_scoping(world: World) -> None:
    early = world.session("early")
    world.emit("normal", "before")
    world.advance(5_000)
    late = world.session("late")
    after = world.emit("normal", "after")
    assert listed(world, session_id=late) == [after]
    assert len(listed(world, session_id=early)) == 2
    assert listed(world, session_id=early, since_baseline=True) == listed(world, session_id=early)
    assert listed(world, session_id=late, since_baseline=True) == [after]
    with pytest.raises(SessionNotFound):
        listed(world, session_id="missing")


def test_session_listing_carries_the_recipients_own_diff(world: World) -> None:
    world.emit("normal", snapshot="a0", object_key="doc")
    session = world.session()
    world.emit("normal", snapshot="a1", object_key="doc")
    event = world.emit("normal", snapshot="a2", object_key="doc")
    records = {r["id"]: r for r in world.service.list_events(EventQuery(session_id=session))}
    shared = {r["id"]: r for r in world.service.list_events(EventQuery())}
    # The session never saw a1, so its a2 delta spans from a0.
    assert shared[event]["diffText"] == "- 1: a1\n+ 1: a2"
    assert records[event]["diffText"] == "- 1: a0\n+ 1: a2"


def test_ephemeral_events_are_hidden_without_a_session(world: World) -> None:
    session = world.session()
    watch = f"ephemeral:{session}/1"
    with world.db.write() as conn:  # the session's own watch: its events reach it alone
        conn.execute(
            "INSERT INTO ephemeral_monitors (id, session_id, workspace_path, source_name,"
            " urgency, urgency_max, created_at, updated_at)"
            " VALUES (?, ?, ?, 'scripted', 'normal', 'normal', 0, 0)",
            (watch, session, world.workspace),
        )
    private = world.emit("normal", monitor=watch)
    public = world.emit("normal")
    assert listed(world) == [public]
    assert listed(world, session_id=session) == [public, private]


def test_ack_with_ids_touches_only_that_sessions_rows(world: World) -> None:
    mine, theirs = world.session("a"), world.session("b")
    event = world.emit("normal")
    foreign = world.emit("normal", monitor="x")
    world.service.ack(theirs, [foreign])
    world.service.ack(mine, [event, "no-such-event"])
    assert world.unread_ids(mine) == [foreign]
    assert world.unread_ids(theirs) == [event]


def test_ack_empty_list_is_a_no_op_and_omitted_ids_ack_everything(world: World) -> None:
    session = world.session()
    ids = [world.emit("normal"), world.emit("high"), world.emit("low")]
    world.service.ack(session, [])
    assert len(world.unread_ids(session)) == 3
    world.advance(1_000)
    world.service.ack(session)
    assert world.unread_ids(session) == []
    for event in ids:
        assert world.state(session, event)["acknowledged_at"] == (START + 1_000) // 1000
    with pytest.raises(SessionNotFound):
        world.service.ack("missing")
