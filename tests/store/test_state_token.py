"""A source's state token is stored beside its state and never outlives it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from agentmonitors.store import queries
from agentmonitors.store.database import Database
from agentmonitors.store.records import NOT_READ
from agentmonitors.store.schema import SCHEMA_VERSION

NOW = 1_780_000_000_000


def save(db: Database, state: object, token: str | None, *, unchanged: bool = False) -> None:
    with db.write() as conn:
        queries.save_monitor_state(
            conn,
            "files",
            "/ws",
            now_ms=NOW,
            last_observation_at_ms=NOW,
            source_state=state,
            notify_state={},
            source_unchanged=unchanged,
            state_token=token,
        )


def stored(db: Database) -> tuple[object, str | None]:
    with db.read() as conn:
        row = queries.load_monitor_state(conn, "files", "/ws")
        assert row is not None
        return queries.load_source_state(conn, "files", "/ws"), row.state_token


def test_the_token_is_stored_with_the_state_and_kept_with_it(tmp_path: Path) -> None:
    with Database(str(tmp_path / "inbox.db")) as db:
        save(db, {"fingerprints": {"a": "1"}}, "t1")
        assert stored(db) == ({"fingerprints": {"a": "1"}}, "t1")
        save(db, NOT_READ, "t1", unchanged=True)
        assert stored(db) == ({"fingerprints": {"a": "1"}}, "t1")
        save(db, NOT_READ, None, unchanged=True)  # kept, but no longer vouched for
        assert stored(db) == ({"fingerprints": {"a": "1"}}, None)
        save(db, {"fingerprints": {"a": "2"}}, "t2")
        assert stored(db) == ({"fingerprints": {"a": "2"}}, "t2")


def test_a_state_rewritten_without_a_new_token_loses_the_old_one(tmp_path: Path) -> None:
    path = str(tmp_path / "inbox.db")
    with Database(path) as db:
        save(db, {"fingerprints": {"a": "1"}}, "t1")
    # Another writer (the other tool of docs/compatibility.md, an older agentmonitors) knows
    # nothing of the column and upserts the state alone.
    conn = sqlite3.connect(path)
    with conn:
        conn.execute(
            "INSERT INTO monitor_state (id, monitor_id, workspace_path, source_state, updated_at)"
            " VALUES ('x', 'files', '/ws', '{\"fingerprints\": {}}', 1)"
            " ON CONFLICT (monitor_id, COALESCE(workspace_path, '')) DO UPDATE SET"
            " source_state = excluded.source_state"
        )
    conn.close()
    with Database(path) as db:
        assert stored(db) == ({"fingerprints": {}}, None)
        # A same-token rewrite of the state cannot vouch for the new state either.
        save(db, {"fingerprints": {"b": "1"}}, "t3")
        save(db, {"fingerprints": {"b": "2"}}, "t3")
        assert stored(db) == ({"fingerprints": {"b": "2"}}, None)


def test_a_kept_state_whose_row_has_gone_is_stored_empty_without_a_token(tmp_path: Path) -> None:
    with Database(str(tmp_path / "inbox.db")) as db:
        save(db, NOT_READ, "t1", unchanged=True)
        assert stored(db) == ({}, None)


def test_a_version_2_database_gains_the_column_and_the_trigger(tmp_path: Path) -> None:
    path = str(tmp_path / "inbox.db")
    with Database(path) as db, db.write() as conn:
        conn.execute("DROP TRIGGER monitor_state_token_follows_state")
        conn.execute("ALTER TABLE monitor_state DROP COLUMN state_token")
        conn.execute("PRAGMA user_version = 2")
    with Database(path) as db:
        with db.read() as conn:
            columns = {row[1] for row in conn.execute("PRAGMA table_info(monitor_state)")}
            triggers = {
                row[0]
                for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
            }
            assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert "state_token" in columns
        assert "monitor_state_token_follows_state" in triggers
        save(db, {"fingerprints": {}}, "t1")
        assert stored(db) == ({"fingerprints": {}}, "t1")
