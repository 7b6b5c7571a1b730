"""Delivery state of a session's projections: unread, pending, claimed, acknowledged.

Rows the Interpret gate suppressed or the ``net`` collapse folded away are kept for
diagnosis but excluded from every query here. Leases are an in-memory overlay the
callers subtract (``pending_for_claim``). Functions run inside the caller's transaction.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence

from agentmonitors.delivery.records import DeliveryRow
from agentmonitors.delivery.unread import carry, unread_ids, unread_rows, version
from agentmonitors.delivery.unread import chunks as _chunks
from agentmonitors.store.ids import new_id

__all__ = [
    "acknowledge",
    "advance_cursors",
    "band",
    "cursor_content",
    "cursor_object_key",
    "folded_unacknowledged",
    "mark_claimed",
    "mark_net_suppressed",
    "pending",
    "pending_for_claim",
    "set_recipient_diff",
    "unread_ids",
    "unread_rows",
]


def band(rows: Iterable[DeliveryRow], urgency: str) -> list[DeliveryRow]:
    return [row for row in rows if row.urgency == urgency]


def pending(rows: Iterable[DeliveryRow]) -> list[DeliveryRow]:
    """Never-surfaced rows (lease-unaware)."""
    return [row for row in rows if row.pending]


def pending_for_claim(rows: Iterable[DeliveryRow], leased: set[str]) -> list[DeliveryRow]:
    """Pending rows not held by a live reservation."""
    return [
        row
        for row in rows
        if row.first_notified_at is None and row.acknowledged_at is None and row.id not in leased
    ]


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
    before = version(conn)
    now = now_ms // 1000
    ids = list(dict.fromkeys(event_ids))
    unknown: list[str] = []
    acknowledged = 0
    for chunk in _chunks(ids):
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
        acknowledged += _set_acknowledged(conn, session_id, chunk, now)
    _set_acknowledged(conn, session_id, _folded_behind(conn, session_id, ids), now)
    # Every given row is acknowledged now; the folded ones were never unread.
    carry(conn, before, session_id, gone=ids)
    return unknown, acknowledged


def _set_acknowledged(
    conn: sqlite3.Connection, session_id: str, event_ids: Sequence[str], now: int
) -> int:
    """Stamp the unacknowledged ones of these rows; how many were stamped."""
    stamped = 0
    for chunk in _chunks(event_ids):
        marks = ", ".join("?" for _ in chunk)
        stamped += conn.execute(
            "UPDATE session_event_state SET acknowledged_at = ?, updated_at = ?"
            f" WHERE session_id = ? AND acknowledged_at IS NULL AND event_id IN ({marks})",
            (now, now, session_id, *chunk),
        ).rowcount
    return stamped


# (monitor, object key, workspace) of an event, and its place in time.
_ObjectKey = tuple[str, str, str]
_Place = tuple[int, str]


def _folded_behind(
    conn: sqlite3.Connection, session_id: str, event_ids: Sequence[str]
) -> list[str]:
    """The session's folded, unacknowledged rows older than a given event of their object.

    Matched here rather than in one self-join: the folded rows are few and found through
    the unread-only index, while a join per acknowledged id walked the monitor's whole
    history and made acknowledging a large backlog quadratic.
    """
    folded: dict[_ObjectKey, list[tuple[_Place, str]]] = {}
    for event_id, monitor_id, object_key, workspace, created_at in conn.execute(
        "SELECT e.id, e.monitor_id, e.object_key, COALESCE(e.workspace_path, ''), e.created_at"
        " FROM session_event_state s JOIN monitor_events e ON e.id = s.event_id"
        " WHERE s.session_id = ? AND s.acknowledged_at IS NULL"
        " AND s.net_suppressed_at IS NOT NULL AND e.object_key IS NOT NULL",
        (session_id,),
    ):
        folded.setdefault((monitor_id, object_key, workspace), []).append(
            ((created_at, event_id), event_id)
        )
    if not folded:
        return []
    # The newest given event of each object that has folded rows.
    newest: dict[_ObjectKey, _Place] = {}
    for chunk in _chunks(event_ids):
        marks = ", ".join("?" for _ in chunk)
        for event_id, monitor_id, object_key, workspace, created_at in conn.execute(
            "SELECT id, monitor_id, object_key, COALESCE(workspace_path, ''), created_at"
            f" FROM monitor_events WHERE id IN ({marks}) AND object_key IS NOT NULL",
            chunk,
        ):
            key, place = (monitor_id, object_key, workspace), (created_at, event_id)
            if key in folded and (key not in newest or place > newest[key]):
                newest[key] = place
    return [
        event_id
        for key, survivor in newest.items()
        for place, event_id in folded[key]
        if place < survivor
    ]


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
    before = version(conn)
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
    carry(conn, before, session_id, changed=ids)


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
    conn.executemany(
        "INSERT INTO session_object_cursor (id, session_id, monitor_id, object_key,"
        " workspace_path, baseline_snapshot_id, baseline_content, updated_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (session_id, monitor_id, object_key, COALESCE(workspace_path, ''))"
        " DO UPDATE SET baseline_snapshot_id = excluded.baseline_snapshot_id,"
        " baseline_content = excluded.baseline_content, updated_at = excluded.updated_at",
        [
            (
                new_id(now_ms),
                session_id,
                row.event.monitor_id,
                cursor_object_key(row),
                row.event.workspace_path,
                row.event.id,
                row.event.snapshot_text,
                now_ms // 1000,
            )
            for row in newest.values()
        ],
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
    before = version(conn)
    conn.execute(
        "UPDATE session_event_state SET diff_text = ?, updated_at = ?"
        " WHERE session_id = ? AND event_id = ?",
        (diff, now_ms // 1000, session_id, event_id),
    )
    carry(conn, before, session_id, changed=(event_id,))


def mark_net_suppressed(
    conn: sqlite3.Connection, session_id: str, event_ids: Sequence[str], now_ms: int
) -> None:
    before = version(conn)
    now = now_ms // 1000
    for chunk in _chunks(list(event_ids)):
        marks = ", ".join("?" for _ in chunk)
        conn.execute(
            "UPDATE session_event_state SET net_suppressed_at = ?, updated_at = ?"
            f" WHERE session_id = ? AND event_id IN ({marks})",
            (now, now, session_id, *chunk),
        )
    carry(conn, before, session_id, gone=event_ids)
