"""Object tombstones: events of one object that must disappear (``verify``'s scratch files).

A suppression names a monitor and an object key until it expires; while it lives, the
object's events, snapshots, cursors and projections are deleted whenever they appear.
The runtime sweeps once per tick (see docs/architecture.md, "The life of one event").
"""

from __future__ import annotations

import logging
import sqlite3

from agentmonitors.store.database import Database

log = logging.getLogger("agentmonitors.store")


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
    conn.execute("DELETE FROM session_object_cursor" + match, params)
    conn.execute("DELETE FROM monitor_events" + match, params)
