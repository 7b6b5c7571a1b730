"""A database file deleted or replaced under a running daemon, reopened.

SQLite would go on writing to the unlinked file and every event after it would be
gone at the next start, silently. A deleted store is recreated fresh with the sessions
carried over, so running sessions keep being served; a replaced one is used as it is.
The daemon (``daemon/app.py``) checks the file's identity on every wake and says what
happened in its log and in ``daemon status``.
"""

from __future__ import annotations

from typing import Any

from agentmonitors.fastpath.lazy_logging import get_logger
from agentmonitors.store.database import Database, StoreError

log = get_logger("agentmonitors.daemon")


def reopen_store(db: Database, problem: str) -> int:
    """Reopen ``db`` after its file was ``problem`` (``deleted`` or ``replaced``).

    Returns how many sessions were carried over into a fresh store; raises
    :class:`StoreError` when the store cannot be reopened.
    """
    sessions = _session_rows(db) if problem == "deleted" else []
    db.reopen()
    return _restore_sessions(db, sessions)


def _session_rows(db: Database) -> list[dict[str, Any]]:
    """The sessions still readable through the connection to a deleted file."""
    try:
        with db.read() as conn:
            rows = conn.execute("SELECT * FROM agent_sessions").fetchall()
    except StoreError:
        log.warning("cannot read the sessions of the deleted database", exc_info=True)
        return []
    return [dict(row) for row in rows]


def _restore_sessions(db: Database, rows: list[dict[str, Any]]) -> int:
    """Insert ``rows`` into the (fresh) store; how many were new there."""
    kept = 0
    try:
        with db.write() as conn:
            for row in rows:
                columns = ", ".join(row)
                marks = ", ".join("?" for _ in row)
                cursor = conn.execute(
                    f"INSERT OR IGNORE INTO agent_sessions ({columns}) VALUES ({marks})",
                    tuple(row.values()),
                )
                kept += cursor.rowcount
    except StoreError:
        log.warning("cannot carry the sessions over to the new database", exc_info=True)
        return 0
    return kept
