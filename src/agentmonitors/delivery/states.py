"""Delivery state of a session's projections: unread, pending, claimed, acknowledged.

Rows the Interpret gate suppressed or the ``net`` collapse folded away are kept for
diagnosis but excluded from every query here. Leases are an in-memory overlay the
callers subtract (``pending_for_claim``). Functions run inside the caller's transaction.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence

from agentmonitors.delivery.records import DeliveryRow
from agentmonitors.store.ids import new_id
from agentmonitors.store.records import EventRow

# Keep well under SQLite's bound-parameter limit.
_CHUNK = 500
# (connection, session, band) -> ((changes by us, changes by others), rows)
_UNREAD_CACHE: dict[tuple[int, str, str | None], tuple[tuple[int, int], list[DeliveryRow]]] = {}


def _chunks(ids: Sequence[str]) -> Iterator[Sequence[str]]:
    for start in range(0, len(ids), _CHUNK):
        yield ids[start : start + _CHUNK]


def unread_rows(
    conn: sqlite3.Connection, session_id: str, urgency: str | None = None
) -> list[DeliveryRow]:
    """Unacknowledged, non-suppressed rows of one session, ``created_at ASC, id ASC``.

    Every hook call re-reads these, so only the per-recipient columns are read for
    each row; the (immutable) event rows come from a per-process cache, and only
    the ones not seen yet are read in full.
    """
    sql = (
        "SELECT s.event_id, s.first_notified_at, s.acknowledged_at, s.diff_text,"
        " s.interpret_digest FROM session_event_state s"
        " JOIN monitor_events e ON e.id = s.event_id"
        " WHERE s.session_id = ? AND s.acknowledged_at IS NULL"
        " AND COALESCE(s.interpret_decision, '') != 'suppress'"
        " AND s.net_suppressed_at IS NULL"
    )
    params: tuple[str, ...] = (session_id,)
    if urgency is not None:
        sql += " AND e.urgency = ?"
        params += (urgency,)
    sql += " ORDER BY e.created_at ASC, e.id ASC"
    # A hook makes several calls in a row (preview, reminder, reserve, commit); while
    # nothing was written by this connection or any other, the rows are the same.
    version = (conn.total_changes, conn.execute("PRAGMA data_version").fetchone()[0])
    key = (id(conn), session_id, urgency)
    cached = _UNREAD_CACHE.get(key)
    if cached is not None and cached[0] == version:
        return list(cached[1])
    cursor = conn.cursor()
    cursor.row_factory = None
    states = cursor.execute(sql, params).fetchall()
    events = cached_events(conn, [state[0] for state in states])
    rows = [
        DeliveryRow(events[event_id], first, acknowledged, diff, digest)
        for event_id, first, acknowledged, diff, digest in states
    ]
    if len(_UNREAD_CACHE) > 256:
        _UNREAD_CACHE.clear()
    _UNREAD_CACHE[key] = (version, rows)
    return list(rows)


def cached_events(conn: sqlite3.Connection, event_ids: Sequence[str]) -> dict[str, EventRow]:
    """The event rows for these ids, read from the database only when not cached."""
    found: dict[str, EventRow] = {}
    missing: list[str] = []
    for event_id in event_ids:
        event = EventRow.cached(event_id)
        if event is None:
            missing.append(event_id)
        else:
            found[event_id] = event
    for chunk in _chunks(missing):
        marks = ", ".join("?" for _ in chunk)
        for row in conn.execute(f"SELECT * FROM monitor_events WHERE id IN ({marks})", chunk):
            found[row["id"]] = EventRow.from_row_cached(row)
    return found


def band(rows: Iterable[DeliveryRow], urgency: str) -> list[DeliveryRow]:
    return [row for row in rows if row.urgency == urgency]


def pending(rows: Iterable[DeliveryRow]) -> list[DeliveryRow]:
    """Never-surfaced rows (lease-unaware)."""
    return [row for row in rows if row.pending]


def pending_for_claim(rows: Iterable[DeliveryRow], leased: set[str]) -> list[DeliveryRow]:
    """Pending rows not held by a live reservation."""
    return [row for row in rows if row.pending and row.id not in leased]


def acknowledge(
    conn: sqlite3.Connection, session_id: str, event_ids: Sequence[str], now_ms: int
) -> tuple[list[str], int]:
    """Acknowledge exactly these events of this session; other ids are left alone.

    Rows the ``net`` collapse folded into one of them (older events of the same object,
    never shown on their own) are acknowledged with it: no ack-all could reach them
    otherwise, and they would stay claimed forever. A row acknowledged before keeps its
    first acknowledgement time.

    Returns the ids that were never projected to this session (so a caller can tell a
    typo from success) and how many of the given ids were unacknowledged until now.
    """
    now = now_ms // 1000
    unknown: list[str] = []
    acknowledged = 0
    for chunk in _chunks(list(dict.fromkeys(event_ids))):
        marks = ", ".join("?" for _ in chunk)
        known = {
            row[0]
            for row in conn.execute(
                "SELECT event_id FROM session_event_state"
                f" WHERE session_id = ? AND event_id IN ({marks})",
                (session_id, *chunk),
            )
        }
        unknown += [event_id for event_id in chunk if event_id not in known]
        acknowledged += conn.execute(
            "UPDATE session_event_state SET acknowledged_at = ?, updated_at = ?"
            f" WHERE session_id = ? AND acknowledged_at IS NULL AND event_id IN ({marks})",
            (now, now, session_id, *chunk),
        ).rowcount
        conn.execute(
            "UPDATE session_event_state SET acknowledged_at = ?, updated_at = ?"
            " WHERE session_id = ? AND acknowledged_at IS NULL AND net_suppressed_at IS NOT NULL"
            " AND event_id IN (SELECT folded.id FROM monitor_events folded"
            " JOIN monitor_events survivor ON survivor.monitor_id = folded.monitor_id"
            " AND survivor.object_key = folded.object_key"
            " AND COALESCE(survivor.workspace_path, '') = COALESCE(folded.workspace_path, '')"
            " AND (folded.created_at < survivor.created_at"
            " OR (folded.created_at = survivor.created_at AND folded.id < survivor.id))"
            f" WHERE survivor.id IN ({marks}))",
            (now, now, session_id, *chunk),
        )
    return unknown, acknowledged


def folded_unacknowledged(conn: sqlite3.Connection, session_id: str) -> list[str]:
    """Rows the ``net`` collapse folded away that are still unacknowledged.

    Only a database written before folded rows followed their survivor holds any whose
    survivor is already acknowledged; ack-all clears those too.
    """
    return [
        str(row[0])
        for row in conn.execute(
            "SELECT event_id FROM session_event_state WHERE session_id = ?"
            " AND acknowledged_at IS NULL AND net_suppressed_at IS NOT NULL",
            (session_id,),
        )
    ]


def mark_claimed(
    conn: sqlite3.Connection,
    session_id: str,
    rows: Sequence[DeliveryRow],
    lifecycle: str,
    now_ms: int,
) -> None:
    """Claim (never acknowledge) the rows, then advance the recipient's cursors.

    ``first_notified_at`` keeps its first value on a re-claim (only its NULL-ness is read).
    """
    now = now_ms // 1000
    ids = list(dict.fromkeys(row.id for row in rows))
    for chunk in _chunks(ids):
        marks = ", ".join("?" for _ in chunk)
        conn.execute(
            "UPDATE session_event_state SET first_notified_at = COALESCE(first_notified_at, ?),"
            " last_claim_at = ?, last_claim_lifecycle = ?, updated_at = ?"
            f" WHERE session_id = ? AND event_id IN ({marks})",
            (now, now, lifecycle, now, session_id, *chunk),
        )
    advance_cursors(conn, session_id, rows, now_ms)


def cursor_object_key(row: DeliveryRow) -> str:
    """The cursor's object key, as projection derives it."""
    return row.event.object_key or row.event.monitor_id


def advance_cursors(
    conn: sqlite3.Connection, session_id: str, rows: Sequence[DeliveryRow], now_ms: int
) -> None:
    """Move each object's cursor to the artifact of the newest claimed event of it."""
    newest: dict[tuple[str, str, str], DeliveryRow] = {}
    for row in sorted(rows, key=lambda item: (item.event.created_at, item.id)):
        if row.event.snapshot_text is None:
            continue
        key = (row.event.monitor_id, cursor_object_key(row), row.event.workspace_path or "")
        newest[key] = row
    for row in newest.values():
        event = row.event
        conn.execute(
            "INSERT INTO session_object_cursor (id, session_id, monitor_id, object_key,"
            " workspace_path, baseline_snapshot_id, baseline_content, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (session_id, monitor_id, object_key, COALESCE(workspace_path, ''))"
            " DO UPDATE SET baseline_snapshot_id = excluded.baseline_snapshot_id,"
            " baseline_content = excluded.baseline_content, updated_at = excluded.updated_at",
            (
                new_id(now_ms),
                session_id,
                event.monitor_id,
                cursor_object_key(row),
                event.workspace_path,
                event.id,
                event.snapshot_text,
                now_ms // 1000,
            ),
        )


def cursor_content(conn: sqlite3.Connection, session_id: str, row: DeliveryRow) -> str | None:
    found = conn.execute(
        "SELECT baseline_content FROM session_object_cursor WHERE session_id = ?"
        " AND monitor_id = ? AND object_key = ?"
        " AND COALESCE(workspace_path, '') = COALESCE(?, '')",
        (session_id, row.event.monitor_id, cursor_object_key(row), row.event.workspace_path),
    ).fetchone()
    return None if found is None else str(found[0])


def set_recipient_diff(
    conn: sqlite3.Connection, session_id: str, event_id: str, diff: str, now_ms: int
) -> None:
    conn.execute(
        "UPDATE session_event_state SET diff_text = ?, updated_at = ?"
        " WHERE session_id = ? AND event_id = ?",
        (diff, now_ms // 1000, session_id, event_id),
    )


def mark_net_suppressed(
    conn: sqlite3.Connection, session_id: str, event_ids: Sequence[str], now_ms: int
) -> None:
    now = now_ms // 1000
    for chunk in _chunks(list(event_ids)):
        marks = ", ".join("?" for _ in chunk)
        conn.execute(
            "UPDATE session_event_state SET net_suppressed_at = ?, updated_at = ?"
            f" WHERE session_id = ? AND event_id IN ({marks})",
            (now, now, session_id, *chunk),
        )
