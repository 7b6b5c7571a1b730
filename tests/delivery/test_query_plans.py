"""Delivery reads history only by key: its cost follows what is unread, not what is stored.

Every statement the delivery service runs for a session's whole life (projection aside:
that is the event's own write) is traced and explained. Events and projections must be
reached by primary key, by the (session, event) key or by the unread-only index, never
by walking a table or a monitor's whole history.
"""

from __future__ import annotations

import re

from agentmonitors.delivery.events import EventQuery
from tests.delivery.conftest import SETTLE, World

TI = "turn-interruptible"
# How a history table may be reached (a plan names a table by its alias, if it has one).
ALLOWED = (
    "USING INDEX sqlite_autoindex_monitor_events_1 (id=?)",
    "USING INDEX idx_session_event_state_key (session_id=? AND event_id=?)",
    "USING COVERING INDEX idx_session_event_state_key (session_id=? AND event_id=?)",
    "USING INDEX idx_session_event_state_unread (session_id=?)",
    "USING INDEX idx_session_object_cursor_key (session_id=? AND monitor_id=? AND object_key=?",
    # One object's events from a point in time on (a moved diff base re-diffs them).
    "USING INDEX idx_monitor_events_object (monitor_id=? AND object_key=? AND created_at>?)",
)
# Tables that hold no history: a few rows per session or monitor.
SMALL = {"agent_sessions", "ephemeral_monitors", "monitor_state", "CONSTANT"}
_SKIPPED = ("BEGIN", "COMMIT", "ROLLBACK", "PRAGMA", "SAVEPOINT", "RELEASE", "INSERT")


def _traced(world: World) -> list[str]:
    session = world.session()
    other = world.service.open_session("host-2", workspace_path=world.workspace)["id"]
    ids = [
        world.emit("high", f"v{index}", snapshot=f"{index}\n", object_key=f"k{index % 3}")
        for index in range(6)
    ]
    ids += [
        world.emit("high", f"n{index}", snapshot=f"{index}\n", object_key="net", strategy="net")
        for index in range(3)
    ]
    ids += [world.emit("normal", f"r{index}") for index in range(2)]
    ids += [world.emit("low", f"l{index}") for index in range(2)]
    world.advance(SETTLE)
    service = world.service
    traced: list[str] = []
    world.db.conn.set_trace_callback(traced.append)
    try:
        service.preview(session, 3)
        service.preview_reminder(session)
        reservation = service.reserve(session, TI, 2)
        assert reservation is not None
        service.commit(reservation["reservationId"])
        service.claim(session, TI)
        service.claim(session, "turn-idle")
        service.claim(session, "post-compact")
        service.hook_state(session)
        service.diagnose(session, TI)
        service.list_events(EventQuery(session_id=session, unread_only=True))
        service.ack_counted(session, ids[:4])
        service.ack_counted(session)
        service.ack_counted(str(other), ids[-3:])
        service.close_session(str(other))
    finally:
        world.db.conn.set_trace_callback(None)
    return [sql for sql in traced if not sql.lstrip().upper().startswith(_SKIPPED)]


def _plan(world: World, sql: str) -> list[str]:
    with world.db.read() as conn:
        return [str(row[3]) for row in conn.execute("EXPLAIN QUERY PLAN " + sql)]


def _walks_history(step: str) -> bool:
    found = re.match(r"(SCAN|SEARCH) (\S+)", step)
    if found is None or found.group(2) in SMALL:
        return False
    return not any(access in step for access in ALLOWED)


def test_no_delivery_statement_walks_history(world: World) -> None:
    statements = _traced(world)
    assert any("acknowledged_at = " in sql for sql in statements)
    offending: list[tuple[str, str]] = []
    for sql in dict.fromkeys(statements):
        offending += [(sql, step) for step in _plan(world, sql) if _walks_history(step)]
    assert offending == []
