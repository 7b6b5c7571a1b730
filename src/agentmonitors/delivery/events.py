"""``events.list``: the event history, globally or as one session sees it."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from agentmonitors.delivery.records import STATE_COLUMNS, DeliveryRow
from agentmonitors.delivery.sessions import get_session
from agentmonitors.delivery.wire import EventRecord
from agentmonitors.fastpath.lean_dataclass import dataclass, replace
from agentmonitors.store.records import EventRow

EPHEMERAL_PREFIX = "ephemeral:"


@dataclass(frozen=True)
class EventQuery:
    session_id: str | None = None
    monitor_id: str | None = None
    urgency: str | None = None
    tags: Sequence[str] = ()
    scope: Mapping[str, str] | None = None
    object_key: str | None = None
    unread_only: bool = False
    since_baseline: bool = False
    since_ms: int | None = None  # strictly after
    cwd: str | None = None  # where the asker stands: a relative scope filePath is read from it


def scope_matches(event_scope: Mapping[str, Any], wanted: Mapping[str, str] | None) -> bool:
    """Every wanted key equals the event's value, or is contained in its list value."""
    for key, value in (wanted or {}).items():
        candidate = event_scope.get(key)
        if isinstance(candidate, list):
            if value not in candidate:
                return False
        elif candidate != value:
            return False
    return True


def _conditions(query: EventQuery) -> tuple[list[str], list[Any]]:
    where: list[str] = []
    params: list[Any] = []
    if query.monitor_id is not None:
        where.append("e.monitor_id = ?")
        params.append(query.monitor_id)
    if query.urgency is not None:
        where.append("e.urgency = ?")
        params.append(query.urgency)
    if query.object_key is not None:
        where.append("e.object_key = ?")
        params.append(query.object_key)
    if query.since_ms is not None:
        where.append("e.created_at * 1000 > ?")
        params.append(query.since_ms)
    return where, params


def _keep(event: EventRow, query: EventQuery) -> bool:
    return all(tag in event.tags for tag in query.tags) and scope_matches(
        event.query_scope if isinstance(event.query_scope, dict) else {}, query.scope
    )


def list_events(conn: sqlite3.Connection, query: EventQuery) -> list[EventRecord]:
    """``MonitorEventRecord[]``, newest first (``created_at DESC, id DESC``).

    Session-scoped: that session's projections, each with its ``deliveryState`` and its
    own diff where it has one; ``unread_only`` leaves out acknowledged rows and rows
    folded away by Interpret or ``net`` (the ones no ack-all would ever clear).
    Unscoped: every event except ephemeral monitors' (a session's private watches).
    """
    return page_events(conn, query, None).records


@dataclass(frozen=True)
class EventPage:
    records: list[EventRecord]
    total: int  # every matching event, the ones past the limit included


def page_events(conn: sqlite3.Connection, query: EventQuery, limit: int | None) -> EventPage:
    """The newest ``limit`` matching records (all when None) and how many match in all.

    Rows past the limit are only counted: a backlog of thousands of events costs a
    count, not thousands of decoded records.
    """
    query = _stored_file_path(conn, query)
    records: list[EventRecord] = []
    total = 0
    filtered = bool(query.tags or query.scope)
    for raw in _matching_rows(conn, query):
        if limit is not None and len(records) >= limit and not filtered:
            total += 1
            continue
        record = _record(raw, query)
        if record is None:
            continue
        total += 1
        if limit is None or len(records) < limit:
            records.append(record)
    return EventPage(records, total)


def _stored_file_path(conn: sqlite3.Connection, query: EventQuery) -> EventQuery:
    """The query with a relative ``filePath`` scope made the stored (absolute) path it names.

    Files are stored under their absolute path while users type them relative: to the
    folder they stand in first, then to the session's project (the order ``snapshot
    --object`` reads a relative key in). A path stored under neither stays as typed.
    """
    wanted = (query.scope or {}).get("filePath")
    if wanted is None or os.path.isabs(wanted):
        return query
    bases = [query.cwd]
    if query.session_id is not None:
        bases.append(get_session(conn, query.session_id)["workspace_path"])
    for base in bases:
        if not base:
            continue
        path = os.path.normpath(os.path.join(base, wanted))
        stored = conn.execute(
            "SELECT 1 FROM monitor_events WHERE object_key = ? LIMIT 1", (path,)
        ).fetchone()
        if stored is not None:
            return replace(query, scope={**(query.scope or {}), "filePath": path})
    return query


def _matching_rows(conn: sqlite3.Connection, query: EventQuery) -> Iterator[sqlite3.Row]:
    where, params = _conditions(query)
    order = " ORDER BY e.created_at DESC, e.id DESC"
    if query.session_id is None:
        where.append(f"e.monitor_id NOT LIKE '{EPHEMERAL_PREFIX}%'")
        sql = "SELECT e.* FROM monitor_events e WHERE " + " AND ".join(where) + order
        yield from conn.execute(sql, params)
        return
    session = get_session(conn, query.session_id)
    where.insert(0, "s.session_id = ?")
    params.insert(0, query.session_id)
    if query.unread_only:
        where += [
            "s.acknowledged_at IS NULL",
            "COALESCE(s.interpret_decision, '') != 'suppress'",
            "s.net_suppressed_at IS NULL",
        ]
    if query.since_baseline:
        where.append("e.created_at >= ?")
        params.append(session["baseline_at"])
    sql = (
        f"SELECT e.*, {STATE_COLUMNS} FROM session_event_state s"
        " JOIN monitor_events e ON e.id = s.event_id WHERE " + " AND ".join(where) + order
    )
    yield from conn.execute(sql, params)


def _record(raw: sqlite3.Row, query: EventQuery) -> EventRecord | None:
    """The record of one row, or None when a tag or scope filter leaves it out."""
    if query.session_id is None:
        event = EventRow.from_row(raw)
        return event.to_json() if _keep(event, query) else None
    row = DeliveryRow.from_row(raw)
    if not _keep(row.event, query):
        return None
    record = row.event.to_json()
    if row.recipient_diff is not None:
        record["diffText"] = row.recipient_diff
    record["deliveryState"] = row.delivery_state
    return record
