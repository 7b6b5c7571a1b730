"""A hook's reads grow with what is unread, not with a session's acknowledged history."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from agentmonitors.delivery import states
from agentmonitors.store.database import Database
from agentmonitors.store.schema import SCHEMA_VERSION


def plan(conn: sqlite3.Connection, sql: str, *params: object) -> str:
    return " / ".join(str(row[3]) for row in conn.execute("EXPLAIN QUERY PLAN " + sql, params))


def test_unread_rows_are_found_through_the_unread_only_index(tmp_path: Path) -> None:
    with Database(str(tmp_path / "inbox.db")) as db, db.read() as conn:
        traced: list[str] = []
        conn.set_trace_callback(traced.append)
        try:
            states.unread_rows(conn, "S1")
        finally:
            conn.set_trace_callback(None)
        (query,) = [sql for sql in traced if "FROM session_event_state" in sql]
        used = plan(conn, query.replace("'S1'", "?"), "S1")
    assert "USING INDEX idx_session_event_state_unread (session_id=?)" in used


def test_a_version_1_database_gains_the_index_when_opened(tmp_path: Path) -> None:
    path = str(tmp_path / "inbox.db")
    with Database(path) as db, db.write() as conn:
        conn.execute("DROP INDEX idx_session_event_state_unread")
        conn.execute("PRAGMA user_version = 1")
    with Database(path) as db, db.read() as conn:
        names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
        assert "idx_session_event_state_unread" in names
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
