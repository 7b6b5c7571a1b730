"""Object tombstones: events of one object that must disappear (``verify``'s scratch files).

A suppression names a monitor and an object key until it expires; while it lives, the
object's events, snapshots, cursors and projections are deleted whenever they appear.
The runtime sweeps once per tick (see docs/architecture.md, "The life of one event").
"""

from __future__ import annotations

import sqlite3

from agentmonitors.fastpath.lazy_logging import get_logger
from agentmonitors.fastpath.ulid import new_id
from agentmonitors.store import baseline_packs
from agentmonitors.store.database import Database

log = get_logger("agentmonitors.store")


def sweep_suppressions(db: Database, workspace: str | None, now_ms: int) -> None:
    """Apply the live tombstones of ``workspace``, then purge the expired ones.

    Never raises: a failed sweep is retried next tick, and must not stop that tick.
    """
    now_s = now_ms // 1000
    try:
        with db.read() as conn:
            if not conn.execute("SELECT 1 FROM object_event_suppressions LIMIT 1").fetchone():
                return
        with db.write() as conn:
            active = conn.execute(
                "SELECT monitor_id, object_key, workspace_path FROM object_event_suppressions"
                " WHERE expires_at > ? AND (workspace_path = ? OR workspace_path IS NULL)",
                (now_s, workspace),
            ).fetchall()
            for monitor_id, object_key, suppressed_workspace in active:
                delete_object_events(conn, monitor_id, object_key, suppressed_workspace)
            conn.execute("DELETE FROM object_event_suppressions WHERE expires_at <= ?", (now_s,))
    except Exception:
        log.warning("could not sweep object suppressions", exc_info=True)


def delete_object_events(
    conn: sqlite3.Connection, monitor_id: str, object_key: str, workspace: str | None
) -> None:
    """Every stored trace of one object: projections, snapshots, cursors and events."""
    match = (
        " WHERE monitor_id = ? AND object_key = ?"
        " AND COALESCE(workspace_path, '') = COALESCE(?, '')"
    )
    params = (monitor_id, object_key, workspace)
    conn.execute(
        "DELETE FROM session_event_state WHERE event_id IN (SELECT id FROM monitor_events"
        + match
        + ")",
        params,
    )
    conn.execute("DELETE FROM monitor_snapshots" + match, params)
    baseline_packs.forget_key(conn, workspace, monitor_id, object_key)
    conn.execute("DELETE FROM session_object_cursor" + match, params)
    conn.execute("DELETE FROM monitor_events" + match, params)


# Only verify's scratch objects may be tombstoned or retracted by key: a tombstone on a
# real file would silently swallow the user's own changes to it.
SYNTHETIC_MARKER = "agentmonitors-verify-"


def is_synthetic(object_key: str) -> bool:
    return SYNTHETIC_MARKER in object_key


def suppress_object(
    db: Database,
    monitor_id: str,
    object_key: str,
    workspace: str | None,
    *,
    ttl_ms: int,
    now_ms: int,
) -> dict[str, object]:
    """Tombstone a synthetic object until ``now + ttl``; its traces go at each sweep.

    Raises ValueError for a key that is not a scratch object's.
    """
    if not is_synthetic(object_key):
        raise ValueError(f"objectKey {object_key!r} is not a verify scratch object")
    now_s, expires_s = now_ms // 1000, (now_ms + max(ttl_ms, 0) + 999) // 1000
    with db.write() as conn:
        conn.execute(
            "INSERT INTO object_event_suppressions"
            " (id, monitor_id, object_key, workspace_path, created_at, expires_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (new_id(now_ms), monitor_id, object_key, workspace, now_s, expires_s),
        )
    return {"ok": True, "expiresAt": expires_s}


def retract_object(db: Database, monitor_id: str, object_key: str, workspace: str | None) -> int:
    """Delete every trace of a synthetic object now; returns how many events went."""
    if not is_synthetic(object_key):
        raise ValueError(f"objectKey {object_key!r} is not a verify scratch object")
    match = (
        "SELECT COUNT(*) FROM monitor_events WHERE monitor_id = ? AND object_key = ?"
        " AND COALESCE(workspace_path, '') = COALESCE(?, '')"
    )
    with db.write() as conn:
        count = int(conn.execute(match, (monitor_id, object_key, workspace)).fetchone()[0])
        delete_object_events(conn, monitor_id, object_key, workspace)
    return count


def retract_events(db: Database, monitor_id: str, event_ids: list[str]) -> int:
    """Delete exactly these events of ``monitor_id`` (a real file's verify events)."""
    if not event_ids:
        return 0
    marks = ", ".join("?" for _ in event_ids)
    owned = f"SELECT id FROM monitor_events WHERE monitor_id = ? AND id IN ({marks})"
    with db.write() as conn:
        ids = [row[0] for row in conn.execute(owned, (monitor_id, *event_ids)).fetchall()]
        if not ids:
            return 0
        keep = ", ".join("?" for _ in ids)
        conn.execute(f"DELETE FROM session_event_state WHERE event_id IN ({keep})", ids)
        conn.execute(f"DELETE FROM monitor_events WHERE id IN ({keep})", ids)
    return len(ids)
