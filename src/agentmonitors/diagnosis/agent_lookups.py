"""What every agent verb looks up before it answers: who asks, and what is stored.

The asker's :class:`Scope` (workspace, session, folder), the checks every verb runs
first (the session exists, the monitor is known and, for a watch, read by its own
session), the object meant, and the stored snapshots of that object a verb reads from:
the latest, the one before another, or the one an event id or a time names
(``--from``/``--to``). Read-only, like the verbs (``diagnosis/agent_views.py``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

from agentmonitors.clock import ms_from_iso
from agentmonitors.delivery.records import SessionNotFound
from agentmonitors.delivery.sessions import get_session
from agentmonitors.diagnosis.object_keys import key_listing, resolve_object_key
from agentmonitors.fastpath.lean_dataclass import dataclass
from agentmonitors.store import baseline_packs
from agentmonitors.store.records import iso_from_seconds, loads

EPHEMERAL_PREFIX = "ephemeral:"

# Tells whether a monitor id is defined by a file (ids of ephemeral monitors are
# checked against their table instead).
FileMonitorCheck = Callable[[str], bool]


class AgentViewError(ValueError):
    """A verb cannot answer; the message says why and what to pass instead."""


@dataclass(frozen=True)
class Scope:
    """Where a verb reads: the workspace, the session asking (if any), and the folder the
    asker stands in (a relative object key is read from there first)."""

    workspace: str | None
    session_id: str | None = None
    cwd: str | None = None


# --------------------------------------------------------------------------- lookups


def require_session(conn: sqlite3.Connection, session_id: str) -> sqlite3.Row:
    """The session's row; the message is the one every session command prints."""
    try:
        return get_session(conn, session_id)
    except SessionNotFound:
        raise AgentViewError(
            f"Session not found: {session_id}. Run `agentmonitors session list` to find a"
            " session id."
        ) from None


def check_monitor(
    conn: sqlite3.Connection, scope: Scope, monitor_id: str, is_file_monitor: FileMonitorCheck
) -> None:
    """Refuse an unknown id, and an ephemeral one read outside its own session.

    An ephemeral monitor's data belongs to the session that declared it: a read that
    names no session, or another one, is refused the way ``watch cancel`` refuses it.
    """
    if scope.session_id is not None:
        require_session(conn, scope.session_id)
    if monitor_id.startswith(EPHEMERAL_PREFIX):
        owner = conn.execute(
            "SELECT session_id FROM ephemeral_monitors WHERE id = ?", (monitor_id,)
        ).fetchone()
        if owner is None or (scope.session_id is not None and owner[0] != scope.session_id):
            where = f" for session {scope.session_id}" if scope.session_id else ""
            raise AgentViewError(f"Ephemeral monitor {monitor_id} was not found{where}.")
        if scope.session_id is None:
            raise AgentViewError(
                f"{monitor_id} is an ephemeral monitor of session {owner[0]}: pass"
                f" --session {owner[0]} to read it."
            )
        return
    stored = conn.execute(
        "SELECT 1 FROM monitor_events WHERE monitor_id = ? AND workspace_path IS ? LIMIT 1",
        (monitor_id, scope.workspace),
    ).fetchone()
    if stored is None and not is_file_monitor(monitor_id):
        raise AgentViewError(
            f'Unknown monitor id "{monitor_id}": no monitor file defines it, it is no'
            " ephemeral monitor, and nothing is stored for it in this workspace. Run"
            " `agentmonitors scan` to list the monitors."
        )


def _object_keys(conn: sqlite3.Connection, scope: Scope, monitor_id: str) -> list[str]:
    """The objects with a stored snapshot, most recently changed first."""
    rows = conn.execute(
        "SELECT object_key, MAX(created_at) AS at, MAX(id) AS last FROM monitor_snapshots"
        " WHERE monitor_id = ? AND workspace_path IS ? GROUP BY object_key"
        " ORDER BY at DESC, last DESC",
        (monitor_id, scope.workspace),
    ).fetchall()
    keys = [str(row[0]) for row in rows]
    # Objects known only from a packed baseline changed least recently of all.
    listed = set(keys)
    packed = baseline_packs.keys(conn, scope.workspace, monitor_id)
    keys.extend(key for key, _ in packed if key not in listed)
    return keys


def pick_object(
    conn: sqlite3.Connection, scope: Scope, monitor_id: str, object_key: str | None
) -> str | list[str]:
    """The object to read, or every key when the monitor watches several and none was named."""
    keys = _object_keys(conn, scope, monitor_id)
    if object_key is not None:
        found = resolve_object_key(object_key, keys, workspace=scope.workspace, cwd=scope.cwd)
        if found is None:
            raise AgentViewError(
                f'Monitor {monitor_id} has no stored snapshot of object "{object_key}"'
                f" (objects with snapshots: {key_listing(keys, monitor_id)})."
            )
        return found
    if not keys:
        raise AgentViewError(
            f"Monitor {monitor_id} has no stored snapshot yet: it has not observed a change"
            " that carries one. `agentmonitors monitor explain "
            f"{monitor_id}` shows where it stands."
        )
    if len(keys) == 1:
        return keys[0]
    return keys


@dataclass(frozen=True)
class SnapshotPoint:
    """One stored snapshot of an object."""

    snapshot_id: str
    event_id: str
    content: str
    created_at: int

    def to_json(self, kind: str, point: str | None) -> dict[str, Any]:
        return {
            "kind": kind,
            "point": point,
            # A snapshot kept from a baseline came with no event.
            "eventId": self.event_id or None,
            "baseline": not self.event_id,
            "capturedAt": iso_from_seconds(self.created_at),
        }


_SNAPSHOT_COLUMNS = "SELECT id, event_id, content, created_at FROM monitor_snapshots"
_OBJECT_MATCH = " WHERE monitor_id = ? AND object_key = ? AND workspace_path IS ?"


def _point(row: sqlite3.Row | tuple[Any, ...] | None) -> SnapshotPoint | None:
    if row is None:
        return None
    return SnapshotPoint(str(row[0]), str(row[1]), str(row[2]), int(row[3]))


def _packed(
    conn: sqlite3.Connection, scope: Scope, monitor_id: str, key: str
) -> SnapshotPoint | None:
    """The object's snapshot in its monitor's packed baseline (store/baseline_packs.py),
    older than any row of it; it has no id of its own."""
    found = baseline_packs.PackReader(conn, scope.workspace, monitor_id).text(key)
    return None if found is None else SnapshotPoint("", "", found[0], found[1])


def latest_snapshot(
    conn: sqlite3.Connection, scope: Scope, monitor_id: str, key: str
) -> SnapshotPoint | None:
    found = _point(
        conn.execute(
            _SNAPSHOT_COLUMNS + _OBJECT_MATCH + " ORDER BY created_at DESC, id DESC LIMIT 1",
            (monitor_id, key, scope.workspace),
        ).fetchone()
    )
    return found if found is not None else _packed(conn, scope, monitor_id, key)


def snapshot_before(
    conn: sqlite3.Connection, scope: Scope, monitor_id: str, key: str, point: SnapshotPoint
) -> SnapshotPoint | None:
    """The snapshot stored just before ``point``."""
    if not point.snapshot_id:
        return None  # a packed baseline: nothing is older
    found = _point(
        conn.execute(
            _SNAPSHOT_COLUMNS
            + _OBJECT_MATCH
            + " AND (created_at < ? OR (created_at = ? AND id < ?))"
            " ORDER BY created_at DESC, id DESC LIMIT 1",
            (
                monitor_id,
                key,
                scope.workspace,
                point.created_at,
                point.created_at,
                point.snapshot_id,
            ),
        ).fetchone()
    )
    return found if found is not None else _packed(conn, scope, monitor_id, key)


def resolve_point(
    conn: sqlite3.Connection, scope: Scope, monitor_id: str, key: str, flag: str, raw: str
) -> SnapshotPoint:
    """``--from``/``--to``: an event id (its snapshot) or an ISO-8601 time (the snapshot at
    or just before it). A point whose snapshot is gone is an error, never an empty diff."""
    event = conn.execute(
        "SELECT monitor_id, object_key, snapshot_text FROM monitor_events"
        " WHERE id = ? AND workspace_path IS ?",
        (raw, scope.workspace),
    ).fetchone()
    if event is not None:
        if event[0] != monitor_id or (event[1] or event[0]) != key:
            raise AgentViewError(
                f"{flag} {raw}: that event belongs to monitor {event[0]}, object"
                f' "{event[1] or event[0]}", not {monitor_id} "{key}".'
            )
        found = _point(
            conn.execute(
                _SNAPSHOT_COLUMNS + _OBJECT_MATCH + " AND event_id = ? LIMIT 1",
                (monitor_id, key, scope.workspace, raw),
            ).fetchone()
        )
        if found is not None:
            return found
        if event[2] is None:
            raise AgentViewError(f"{flag} {raw}: that event carries no snapshot to diff.")
        raise AgentViewError(
            f"{flag} {raw}: the snapshot of that event has been pruned from the store;"
            " pick a later event or time."
        )
    at_ms = ms_from_iso(raw)
    if at_ms is None:
        raise AgentViewError(
            f"{flag} {raw}: no stored event of monitor {monitor_id} has this id (unknown, or"
            " pruned), and it is not an ISO-8601 time."
        )
    found = _point(
        conn.execute(
            _SNAPSHOT_COLUMNS + _OBJECT_MATCH + " AND created_at <= ?"
            " ORDER BY created_at DESC, id DESC LIMIT 1",
            (monitor_id, key, scope.workspace, at_ms // 1000),
        ).fetchone()
    )
    if found is None:
        packed = _packed(conn, scope, monitor_id, key)
        if packed is not None and packed.created_at <= at_ms // 1000:
            return packed
        oldest = packed or _point(
            conn.execute(
                _SNAPSHOT_COLUMNS + _OBJECT_MATCH + " ORDER BY created_at, id LIMIT 1",
                (monitor_id, key, scope.workspace),
            ).fetchone()
        )
        kept = (
            f"; the oldest kept is from {iso_from_seconds(oldest.created_at)}"
            f" (event {oldest.event_id})"
            if oldest is not None
            else ""
        )
        raise AgentViewError(
            f'{flag} {raw}: no snapshot of "{key}" is stored at or before that time (none'
            f" was taken yet, or it has been pruned){kept}."
        )
    return found


def diff_strategy(conn: sqlite3.Connection, event_id: str) -> str | None:
    """The diff strategy the runtime used for this event's object."""
    row = conn.execute(
        "SELECT snapshot_metadata FROM monitor_events WHERE id = ?", (event_id,)
    ).fetchone()
    metadata = loads(row[0], {}) if row is not None else {}
    strategy = metadata.get("strategy") if isinstance(metadata, dict) else None
    return strategy if isinstance(strategy, str) else None
