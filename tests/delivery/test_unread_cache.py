"""A session's unread rows are read once, then kept current across the service's own writes.

Every hook call touches its session and every delivery claims a few rows; neither may
cost a re-read of the whole backlog, and the rows kept must always equal what a fresh
read of the database returns.
"""

from __future__ import annotations

from typing import Any

import pytest

from agentmonitors.delivery import unread
from agentmonitors.delivery.reserve_rendered import reserve_rendered
from agentmonitors.delivery.service import DeliveryService
from agentmonitors.store.database import Database, StoreError
from tests.delivery.conftest import SETTLE, World, event_ids

TI = "turn-interruptible"
# The statement that reads a session's whole unread set.
WHOLE_READ = "FROM session_event_state s JOIN monitor_events e"


def traced(world: World, action: Any) -> tuple[Any, list[str]]:
    statements: list[str] = []
    world.db.conn.set_trace_callback(statements.append)
    try:
        result = action()
    finally:
        world.db.conn.set_trace_callback(None)
    return result, statements


def state_of(rows: list[Any]) -> list[tuple[Any, ...]]:
    return [
        (row.id, row.first_notified_at, row.acknowledged_at, row.recipient_diff, row.digest)
        for row in rows
    ]


def test_a_hook_call_after_a_delivery_does_not_read_the_backlog_again(world: World) -> None:
    session = world.session()
    ids = [world.emit("high", f"change {n}", monitor=f"m{n}") for n in range(200)]
    world.advance(SETTLE)

    def deliver() -> Any:
        reply = reserve_rendered(world.service, "host-1", TI, socket_path="/run/am.sock")
        reservation = reply.get("reservation")
        assert reservation is not None
        return world.service.commit(reservation["reservationId"])

    first, statements = traced(world, deliver)
    assert any(WHOLE_READ in sql for sql in statements)
    shown = event_ids(first)
    second, statements = traced(world, deliver)
    # The touch and the first delivery's claim were the service's own writes.
    assert not [sql for sql in statements if WHOLE_READ in sql]
    assert event_ids(second) == ids[len(shown) : len(shown) + len(event_ids(second))]
    assert world.claimed_ids(session) == set(ids[: len(shown) + len(event_ids(second))])


def test_kept_rows_always_equal_a_fresh_read(world: World) -> None:
    session = world.session()
    other = world.session("host-2")
    fresh_db = Database(world.db.path)
    try:

        def check() -> None:
            for sid in (session, other):
                with world.db.read() as conn:
                    kept = unread.unread_rows(conn, sid)
                    kept_high = unread.unread_rows(conn, sid, "high")
                with fresh_db.read() as conn:
                    # A second connection has its own cache: this one reads the file.
                    expected = unread.unread_rows(conn, sid)
                assert state_of(kept) == state_of(expected)
                assert state_of(kept_high) == [
                    state
                    for state, row in zip(state_of(expected), expected, strict=True)
                    if row.urgency == "high"
                ]

        def net(key: str, text: str) -> str:
            world.advance(1000)
            return world.emit(
                "high", f"{key}: {text}", snapshot=text, object_key=key, strategy="net"
            )

        plain = [world.emit(level, f"{level} {n}") for n in range(3) for level in ("high", "low")]
        versions = [net("a.md", "1\n"), net("b.md", "1\n"), net("a.md", "2\n"), net("a.md", "3\n")]
        world.advance(SETTLE)
        check()
        assert world.service.claim(session, TI, 2) is not None  # claims two groups
        check()
        world.service.touch_session(session)
        check()
        reservation = world.service.reserve(session, TI, 1)
        assert reservation is not None
        check()
        world.service.release(reservation["reservationId"])
        check()
        assert world.service.claim(session, TI) is not None  # folds a.md's older versions
        check()
        world.emit("normal", "arrives between two calls")  # a projection, not ours
        check()
        world.service.ack(session, [plain[0], versions[-1]])
        check()
        assert world.service.claim(session, "turn-idle") is not None
        check()
        assert world.service.claim(other, "post-compact") is not None
        check()
        world.service.ack(other)
        check()
        assert world.unread_ids(other) == []
    finally:
        fresh_db.close()


def test_a_write_by_another_connection_is_seen(world: World) -> None:
    session = world.session()
    world.emit("high", "change")
    world.advance(SETTLE)
    assert world.service.preview(session) != []  # read and kept
    # Another process (a second daemon instance, a command) acknowledges everything.
    with Database(world.db.path) as db:
        DeliveryService(db, world.clock).ack(session)
    assert world.service.preview(session) == []
    assert world.service.claim(session, TI) is None


def test_rows_kept_across_a_write_that_rolled_back_are_forgotten(world: World) -> None:
    session = world.session()
    ids = [world.emit("high", f"change {n}", monitor=f"m{n}") for n in range(2)]
    world.advance(SETTLE)
    assert len(world.service.preview(session)) == 2  # read and kept
    # The recap's last write fails, after its rows were marked claimed in the same
    # transaction: the whole claim rolls back.
    with world.db.write() as conn:
        conn.execute(
            "CREATE TRIGGER no_recap BEFORE UPDATE OF last_recap_at ON agent_sessions"
            " BEGIN SELECT RAISE(ABORT, 'the disk is full'); END"
        )
    with pytest.raises(StoreError, match="the disk is full"):
        world.service.claim(session, "post-compact")
    with world.db.write() as conn:
        conn.execute("DROP TRIGGER no_recap")
    assert world.claimed_ids(session) == set()
    assert event_ids(world.service.claim(session, TI)) == ids
