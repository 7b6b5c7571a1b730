"""A session's unread rows, read once and kept current across the service's own writes.

Every hook call decides from all of a session's unread rows. Re-reading them each time
cost more than the rest of the decision for a session with a large backlog, although
between two calls only the previous claim's few rows (and the session's touch) changed.
So the rows are cached per connection and session, tagged with the connection's
version (its own change count and ``PRAGMA data_version``, which moves when another
connection commits). A write that the delivery code makes itself, and whose effect on
the rows it knows (see :func:`carry`), moves the cached rows to the new version instead
of discarding them; any other write (a new event's projection, a purge, another
process) leaves them stale and they are read again. A rolled-back transaction keeps
its changes in the count, so the service forgets every kept row when a write fails.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Iterator, Sequence

from agentmonitors.delivery.records import DeliveryRow
from agentmonitors.store.records import EventRow

# Keep well under SQLite's bound-parameter limit.
CHUNK = 500

Version = tuple[int, int]
# event id, first_notified_at, acknowledged_at, diff_text, interpret_digest
_State = tuple[str, int | None, int | None, str | None, str | None]
# (connection id, session, band) -> (connection, version, rows); a list here is never
# mutated. The entry holds its connection so that id cannot be reused by a new one (a
# reopened database) while the entry lives; connections take no weak references.
_CACHE: dict[
    tuple[int, str, str | None], tuple[sqlite3.Connection, Version, list[DeliveryRow]]
] = {}
_MAX_ENTRIES = 256

_STATE_SELECT = (
    "SELECT s.event_id, s.first_notified_at, s.acknowledged_at, s.diff_text,"
    " s.interpret_digest FROM session_event_state s"
)
_UNREAD = (
    " s.acknowledged_at IS NULL AND COALESCE(s.interpret_decision, '') != 'suppress'"
    " AND s.net_suppressed_at IS NULL"
)


def chunks(ids: Sequence[str]) -> Iterator[Sequence[str]]:
    for start in range(0, len(ids), CHUNK):
        yield ids[start : start + CHUNK]


def version(conn: sqlite3.Connection) -> Version:
    """What any write to the database, by this connection or another, changes."""
    return conn.total_changes, conn.execute("PRAGMA data_version").fetchone()[0]


def unread_rows(
    conn: sqlite3.Connection, session_id: str, urgency: str | None = None
) -> list[DeliveryRow]:
    """Unacknowledged, non-suppressed rows of one session, ``created_at ASC, id ASC``.

    Only the per-recipient columns are read for each row; the (immutable) event rows
    come from a per-process cache, and only the ones not seen yet are read in full.
    """
    now = version(conn)
    key = (id(conn), session_id, urgency)
    cached = _CACHE.get(key)
    if cached is not None and cached[0] is conn and cached[1] == now:
        return list(cached[2])
    sql = _STATE_SELECT + " JOIN monitor_events e ON e.id = s.event_id WHERE s.session_id = ?"
    sql += " AND" + _UNREAD
    params: tuple[str, ...] = (session_id,)
    if urgency is not None:
        sql += " AND e.urgency = ?"
        params += (urgency,)
    sql += " ORDER BY e.created_at ASC, e.id ASC"
    cursor = conn.cursor()
    cursor.row_factory = None
    states = cursor.execute(sql, params).fetchall()
    events = cached_events(conn, [state[0] for state in states])
    rows = [
        DeliveryRow(events[event_id], first, acknowledged, diff, digest)
        for event_id, first, acknowledged, diff, digest in states
    ]
    if len(_CACHE) > _MAX_ENTRIES:
        _CACHE.clear()
    _CACHE[key] = (conn, now, rows)
    return list(rows)


def unread_ids(conn: sqlite3.Connection, session_id: str) -> list[str]:
    """The ids :func:`unread_rows` would return, without reading any event's columns.

    Ack-all needs only these; reading (and decoding) every event of a large backlog
    just to take its id cost more than acknowledging it.
    """
    return [
        str(row[0])
        for row in conn.execute(
            "SELECT s.event_id FROM session_event_state s"
            " JOIN monitor_events e ON e.id = s.event_id WHERE s.session_id = ? AND"
            + _UNREAD
            + " ORDER BY e.created_at ASC, e.id ASC",
            (session_id,),
        )
    ]


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
    for chunk in chunks(missing):
        marks = ", ".join("?" for _ in chunk)
        for row in conn.execute(f"SELECT * FROM monitor_events WHERE id IN ({marks})", chunk):
            found[row["id"]] = EventRow.from_row_cached(row)
    return found


def carry(
    conn: sqlite3.Connection,
    before: Version,
    session_id: str = "",
    *,
    changed: Collection[str] = (),
    gone: Collection[str] = (),
) -> None:
    """Keep the cached rows across a write the caller just made on ``conn``.

    Everything written since ``before`` must be the caller's, and it may only have
    changed the state columns of ``changed`` rows of ``session_id`` (re-read here;
    they may leave the unread set, never join it) and taken ``gone`` rows of it out of
    the unread set. Writes to other tables or other sessions' rows are neutral.
    Rows cached at another version are dropped: something else wrote in between.
    """
    now = version(conn)
    for key, (owner, at, rows) in list(_CACHE.items()):
        if owner is not conn:
            continue
        if at != before:
            del _CACHE[key]
            continue
        if key[1] == session_id and (changed or gone):
            _CACHE[key] = (conn, now, _patched(conn, session_id, rows, changed, gone))
        else:
            _CACHE[key] = (conn, now, rows)


def forget() -> None:
    """Drop every kept row: a write that carried them may have been rolled back."""
    _CACHE.clear()


def _patched(
    conn: sqlite3.Connection,
    session_id: str,
    rows: list[DeliveryRow],
    changed: Collection[str],
    gone: Collection[str],
) -> list[DeliveryRow]:
    """``rows`` after the change, in the same order."""
    removed = set(gone)
    touched = removed.union(changed)
    fresh: dict[str, _State] = {}
    cursor = conn.cursor()
    cursor.row_factory = None
    for chunk in chunks(sorted(touched - removed)):
        marks = ", ".join("?" for _ in chunk)
        for state in cursor.execute(
            _STATE_SELECT + f" WHERE s.session_id = ? AND s.event_id IN ({marks}) AND" + _UNREAD,
            (session_id, *chunk),
        ):
            fresh[state[0]] = state
    kept: list[DeliveryRow] = []
    for row in rows:
        if row.id not in touched:
            kept.append(row)
        elif row.id in fresh:
            _id, first, acknowledged, diff, digest = fresh[row.id]
            kept.append(DeliveryRow(row.event, first, acknowledged, diff, digest))
        # else: it left the unread set
    return kept
