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
from agentmonitors.diff import build_diff
from agentmonitors.fastpath.ulid import new_id
from agentmonitors.store.records import loads

__all__ = [
    "acknowledge",
    "band",
    "cursor_content",
    "cursor_object_key",
    "folded_unacknowledged",
    "mark_claimed",
    "mark_net_suppressed",
    "move_diff_base",
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

    Acknowledging is seeing: the session's diff base moves to what it acknowledged
    (:func:`move_diff_base`), whichever path the acknowledgement came by.

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
    missing = set(unknown)
    move_diff_base(
        conn, session_id, [event_id for event_id in ids if event_id not in missing], now_ms
    )
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
    seen: Sequence[DeliveryRow] | None = None,
) -> None:
    """Claim (never acknowledge) the rows, then move the diff base to what was ``seen``.

    ``seen`` are the rows whose change the delivery showed (all of ``rows`` when None);
    a reminder claims rows it only counted, and the session has not seen those.
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
    carry(conn, before, session_id, changed=ids)
    shown = rows if seen is None else seen
    move_diff_base(conn, session_id, [row.id for row in shown], now_ms)


def cursor_object_key(row: DeliveryRow) -> str:
    """The cursor's object key, as projection derives it."""
    return row.event.object_key or row.event.monitor_id


# The newest event of one object in a set, as (created_at, id): ids sort in time order.
_Newest = dict[tuple[str, str, str], tuple[int, str]]


def move_diff_base(
    conn: sqlite3.Connection, session_id: str, event_ids: Sequence[str], now_ms: int
) -> None:
    """The session has now seen these events (shown or acknowledged): its diff base moves.

    For each object, the cursor (docs/architecture.md, "The delivery protocol": the base
    of this session's diffs) moves forward to the newest of these events that carries a
    snapshot, never back to an older one, and the diffs of the session's later rows of
    that object that it has not been shown yet are taken again from there, so the next
    delivery (and ``diff --session``) shows what changed since, and only that. Every
    path that acknowledges or shows an event calls this one function. Runs inside the
    caller's transaction; ``event_ids`` must be projected to this session.
    """
    newest: _Newest = {}
    for chunk in _chunks(list(dict.fromkeys(event_ids))):
        marks = ", ".join("?" for _ in chunk)
        for event_id, monitor_id, key, workspace, created_at in conn.execute(
            "SELECT id, monitor_id, COALESCE(object_key, monitor_id),"
            " COALESCE(workspace_path, ''), created_at FROM monitor_events"
            f" WHERE id IN ({marks}) AND snapshot_text IS NOT NULL",
            chunk,
        ):
            place = (int(created_at), str(event_id))
            found = newest.get((monitor_id, key, workspace))
            if found is None or place > found:
                newest[(monitor_id, key, workspace)] = place
    if not newest:
        return
    before = version(conn)
    bases: dict[tuple[str, str, str], tuple[tuple[int, str], str]] = {}
    for (monitor_id, key, workspace), place in newest.items():
        if not _behind(conn, session_id, monitor_id, key, workspace, place):
            continue
        row = conn.execute(
            "SELECT snapshot_text, workspace_path FROM monitor_events WHERE id = ?", (place[1],)
        ).fetchone()
        content = str(row[0])
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
                monitor_id,
                key,
                row[1],
                place[1],
                content,
                now_ms // 1000,
            ),
        )
        bases[(monitor_id, key, workspace)] = (place, content)
    carry(conn, before, session_id, changed=_rediff_unseen(conn, session_id, bases, now_ms))


def _behind(
    conn: sqlite3.Connection,
    session_id: str,
    monitor_id: str,
    key: str,
    workspace: str,
    place: tuple[int, str],
) -> bool:
    """Whether the session's cursor of this object is older than ``place`` (or absent).

    A cursor that names no event (a new recipient's, set to what existed before its
    first event) or an event no longer stored is older than any event it was sent.
    """
    row = conn.execute(
        "SELECT e.created_at, e.id FROM session_object_cursor c"
        " LEFT JOIN monitor_events e ON e.id = c.baseline_snapshot_id"
        " WHERE c.session_id = ? AND c.monitor_id = ? AND c.object_key = ?"
        " AND COALESCE(c.workspace_path, '') = ?",
        (session_id, monitor_id, key, workspace),
    ).fetchone()
    if row is None or row[0] is None:
        return True
    return (int(row[0]), str(row[1])) < place


def _rediff_unseen(
    conn: sqlite3.Connection,
    session_id: str,
    bases: dict[tuple[str, str, str], tuple[tuple[int, str], str]],
    now_ms: int,
) -> list[str]:
    """Take again, from each object's new base, the diffs of the session's later rows of
    that object that were neither shown nor acknowledged; their ids.

    ``bases`` maps an object to (where its base now is, the base's text). Each object's
    later events are reached by its own index (usually none or a few), never by walking
    the session's backlog: a shown batch moves the base of every object it shows.
    """
    rediffed: list[str] = []
    for (monitor_id, key, workspace), (place, base) in bases.items():
        later = _later_unseen(conn, session_id, monitor_id, key, "e.object_key = ?", place)
        if key == monitor_id:  # the key of an event stored without one is its monitor's
            later += _later_unseen(conn, session_id, monitor_id, None, "e.object_key IS ?", place)
        for event_id, created_at, text, metadata, event_workspace in later:
            if event_workspace != workspace:
                continue
            if (int(created_at), str(event_id)) <= place:
                continue
            snapshot = loads(metadata, {})
            strategy = snapshot.get("strategy") if isinstance(snapshot, dict) else None
            conn.execute(
                "UPDATE session_event_state SET diff_text = ?, updated_at = ?"
                " WHERE session_id = ? AND event_id = ?",
                (
                    build_diff(base, str(text), strategy if isinstance(strategy, str) else None),
                    now_ms // 1000,
                    session_id,
                    event_id,
                ),
            )
            rediffed.append(str(event_id))
    return rediffed


def _later_unseen(
    conn: sqlite3.Connection,
    session_id: str,
    monitor_id: str,
    key: str | None,
    key_clause: str,
    place: tuple[int, str],
) -> list[tuple[str, int, str, str, str]]:
    """The object's events from ``place``'s second on that the session has neither been
    shown nor acknowledged: (id, created at, text, snapshot metadata, workspace)."""
    return conn.execute(
        "SELECT e.id, e.created_at, e.snapshot_text, e.snapshot_metadata,"
        " COALESCE(e.workspace_path, '')"
        " FROM monitor_events e"
        " JOIN session_event_state s ON s.session_id = ? AND s.event_id = e.id"
        f" WHERE e.monitor_id = ? AND {key_clause} AND e.created_at >= ?"
        " AND e.snapshot_text IS NOT NULL"
        " AND s.acknowledged_at IS NULL AND s.first_notified_at IS NULL",
        (session_id, monitor_id, key, place[0]),
    ).fetchall()


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
