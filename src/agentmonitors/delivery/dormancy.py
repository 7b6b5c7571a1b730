"""The idle-session sweep the daemon runs before every tick, kept apart from the rest of
the session code: every tick pays for importing it, and it needs nothing but SQL. Going
dormant itself is here too, once: the sweep and ``session close`` both use it.
"""

from __future__ import annotations

import sqlite3

from agentmonitors.fastpath.lazy_logging import get_logger
from agentmonitors.store.database import Database

log = get_logger("agentmonitors.delivery")

SESSION_DORMANCY_MS = 1_800_000


def mark_idle_sessions_dormant(db: Database, workspace: str | None, now_ms: int) -> None:
    """Sessions idle for 30 minutes go dormant (they keep receiving projections).

    Their ephemeral monitors are reaped with them. Nothing is written (no write lock
    taken) on the usual tick where no session is idle. Never raises: the sweep runs
    before every tick and must not stop it.
    """
    cutoff = (now_ms - SESSION_DORMANCY_MS) // 1000
    now_s = now_ms // 1000
    try:
        with db.read() as conn:
            idle = [
                str(row[0])
                for row in conn.execute(
                    "SELECT id FROM agent_sessions WHERE status = 'active'"
                    " AND last_active_at <= ?"
                    " AND (workspace_path = ? OR workspace_path IS NULL)"
                    " AND NOT EXISTS (SELECT 1 FROM ephemeral_monitors e"
                    "   WHERE e.session_id = agent_sessions.id AND e.status = 'active'"
                    "   AND e.created_at > ?)",
                    (cutoff, workspace, cutoff),
                )
            ]
        if not idle:
            return
        with db.write() as conn:
            for session_id in idle:
                # Only while still active: a prompt may have woken it since the read.
                make_dormant(conn, session_id, now_s, if_active=True)
    except Exception:
        log.warning("could not mark idle sessions dormant", exc_info=True)


def make_dormant(
    conn: sqlite3.Connection, session_id: str, now_s: int, *, if_active: bool = False
) -> None:
    """Mark the session dormant and reap its ephemeral monitors; nothing is deleted.

    ``if_active``: leave a session that is no longer active as it is."""
    conn.execute(
        "UPDATE agent_sessions SET status = 'dormant', dormant_at = ?, last_active_at = ?,"
        " updated_at = ? WHERE id = ?" + (" AND status = 'active'" if if_active else ""),
        (now_s, now_s, now_s, session_id),
    )
    conn.execute(
        "UPDATE ephemeral_monitors SET status = 'reaped', reaped_at = ?, updated_at = ?"
        " WHERE session_id = ? AND status = 'active'",
        (now_s, now_s, session_id),
    )
