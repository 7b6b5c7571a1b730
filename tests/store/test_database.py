"""The database file: schema version, pragmas, permissions, migrations and locking."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import time
from pathlib import Path

import pytest

from agentmonitors.fastpath.ulid import MonotonicUlid
from agentmonitors.store.database import Database, StoreBusyError, StoreError
from agentmonitors.store.schema import SCHEMA_VERSION


def mode(path: Path | str) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def indexes(conn: sqlite3.Connection) -> set[str]:
    return {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}


@pytest.fixture
def data_dir(isolated_environment: Path) -> Path:
    return Path(os.environ["XDG_DATA_HOME"]) / "agentmonitors" / "workspaces" / "abc"


def test_new_database_is_versioned_private_and_in_wal_mode(data_dir: Path) -> None:
    path = data_dir / "inbox.db"
    with Database(str(path)) as db, db.read() as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
        assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 5000
        assert {
            "idx_agent_sessions_host",
            "idx_session_event_state_key",
            "idx_monitor_state_key",
            "idx_session_object_cursor_key",
        } <= indexes(conn)
    assert mode(data_dir) == 0o700
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(f"{path}{suffix}"):
            assert mode(f"{path}{suffix}") == 0o600


def test_existing_loose_files_are_tightened_but_symlinks_are_not_followed(
    data_dir: Path, tmp_path: Path
) -> None:
    data_dir.mkdir(parents=True)
    data_dir.chmod(0o755)
    path = data_dir / "inbox.db"
    sqlite3.connect(path).close()
    path.chmod(0o644)
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("not ours")
    outside.chmod(0o644)
    (data_dir / "inbox.db-journal").symlink_to(outside)
    Database(str(path)).close()
    assert mode(data_dir) == 0o700
    assert mode(path) == 0o600
    assert mode(outside) == 0o644


def test_a_shared_folder_named_by_the_user_is_not_re_moded(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o755)
    Database(str(shared / "custom.db")).close()
    assert mode(shared) == 0o755
    assert mode(shared / "custom.db") == 0o600


def test_unique_indexes_refuse_duplicate_rows(data_dir: Path) -> None:
    with Database(str(data_dir / "inbox.db")) as db:
        insert = (
            "INSERT INTO session_event_state (id, session_id, event_id, created_at, updated_at)"
            " VALUES (?, 'S', 'E', 0, 0)"
        )
        with db.write() as conn:
            conn.execute(insert, ("a",))
        with pytest.raises(StoreError, match="UNIQUE constraint failed"), db.write() as conn:
            conn.execute(insert, ("b",))
        with db.read() as conn:
            assert conn.execute("SELECT COUNT(*) FROM session_event_state").fetchone()[0] == 1


def reference_era_database(path: Path) -> None:
    """A database as an older reference build left it: no workspace columns, duplicates."""
    conn = sqlite3.connect(path)
    envelope = {
        "monitor": {"id": "docs", "filePath": "/proj/.claude/monitors/docs/MONITOR.md"},
        "observation": {"title": "held"},
        "observedAt": "2026-01-01T00:00:00.000Z",
        "effectiveUrgency": "high",
    }
    conn.executescript(
        """
        CREATE TABLE monitor_state (monitor_id TEXT PRIMARY KEY, last_observation_at INTEGER,
          last_fingerprint TEXT, source_state TEXT NOT NULL DEFAULT '{}',
          notify_state TEXT NOT NULL DEFAULT '{}', updated_at INTEGER NOT NULL);
        CREATE TABLE observation_history (id TEXT PRIMARY KEY, monitor_id TEXT NOT NULL,
          source_name TEXT NOT NULL, observation_data TEXT NOT NULL DEFAULT '{}',
          result TEXT NOT NULL, created_at INTEGER NOT NULL);
        CREATE TABLE monitor_events (id TEXT PRIMARY KEY, workspace_path TEXT,
          monitor_id TEXT NOT NULL, source_name TEXT NOT NULL, urgency TEXT NOT NULL,
          title TEXT NOT NULL, body TEXT NOT NULL DEFAULT '', summary TEXT NOT NULL DEFAULT '',
          payload TEXT NOT NULL DEFAULT '{}', snapshot_metadata TEXT NOT NULL DEFAULT '{}',
          snapshot_text TEXT, diff_text TEXT, object_key TEXT,
          query_scope TEXT NOT NULL DEFAULT '{}', tags TEXT NOT NULL DEFAULT '[]',
          created_at INTEGER NOT NULL);
        CREATE TABLE session_event_state (id TEXT PRIMARY KEY, session_id TEXT NOT NULL,
          event_id TEXT NOT NULL, first_notified_at INTEGER, acknowledged_at INTEGER,
          last_claim_at INTEGER, last_claim_lifecycle TEXT, created_at INTEGER NOT NULL,
          updated_at INTEGER NOT NULL);
        INSERT INTO session_event_state (id, session_id, event_id, created_at, updated_at)
          VALUES ('r1', 'S', 'E', 1, 1), ('r2', 'S', 'E', 2, 2);
        INSERT INTO monitor_events (id, monitor_id, source_name, urgency, title, created_at)
          VALUES ('E', 'docs', 'file-fingerprint', 'normal', 'kept', 1);
        """
    )
    conn.execute(
        "INSERT INTO monitor_state VALUES ('docs', 5, NULL, '{\"fingerprints\":{}}', ?, 6)",
        (json.dumps({"pendingDebounce": {"observations": [envelope], "dueAt": "x"}}),),
    )
    conn.execute(
        "INSERT INTO monitor_state VALUES ('idle', 5, NULL, '{\"fingerprints\":{}}', '{}', 6)"
    )
    conn.commit()
    conn.close()


def test_reference_era_database_is_migrated_without_losing_held_batches(
    data_dir: Path,
) -> None:
    data_dir.mkdir(parents=True)
    path = data_dir / "inbox.db"
    reference_era_database(path)
    for _ in range(2):  # the second open must be a no-op
        with Database(str(path)) as db, db.read() as conn:
            states = [dict(row) for row in conn.execute("SELECT * FROM monitor_state")]
            assert len(states) == 1
            (state,) = states
            assert state["monitor_id"] == "docs"
            assert state["workspace_path"] == "/proj"
            assert state["source_state"] == "{}"  # baselines were not per-workspace
            held = json.loads(state["notify_state"])["pendingDebounce"]["observations"]
            assert [item["observation"]["title"] for item in held] == ["held"]
            assert "workspace_path" in {
                row[1] for row in conn.execute("PRAGMA table_info(observation_history)")
            }
            assert "baseline_strategy" in {
                row[1] for row in conn.execute("PRAGMA table_info(monitor_events)")
            }
            columns = {row[1] for row in conn.execute("PRAGMA table_info(session_event_state)")}
            assert {"diff_text", "net_suppressed_at", "interpret_decision"} <= columns
            assert conn.execute("SELECT id FROM session_event_state").fetchall()[0][0] == "r1"
            assert conn.execute("SELECT COUNT(*) FROM session_event_state").fetchone()[0] == 1
            assert conn.execute("SELECT title FROM monitor_events").fetchone()[0] == "kept"
            assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_a_newer_schema_version_still_opens(data_dir: Path) -> None:
    path = data_dir / "inbox.db"
    Database(str(path)).close()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    with Database(str(path)) as db, db.read() as conn2:
        assert conn2.execute("PRAGMA user_version").fetchone()[0] == 99


def test_a_locked_database_waits_then_fails_with_a_clear_error(data_dir: Path) -> None:
    path = data_dir / "inbox.db"
    Database(str(path)).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with Database(str(path), busy_timeout_ms=300) as db:
            started = time.monotonic()
            with (
                pytest.raises(StoreBusyError, match="locked by another process") as caught,
                db.write() as conn,
            ):
                conn.execute("DELETE FROM monitor_state")
            assert time.monotonic() - started >= 0.25  # it waited before giving up
            assert str(path) in str(caught.value)
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_a_lock_released_within_the_wait_lets_the_write_through(data_dir: Path) -> None:
    import threading

    path = data_dir / "inbox.db"
    Database(str(path)).close()
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    threading.Timer(0.2, lambda: holder.execute("ROLLBACK")).start()
    with Database(str(path), busy_timeout_ms=5000) as db:
        with db.write() as conn:
            conn.execute(
                "INSERT INTO observation_history (id, monitor_id, source_name, result,"
                " created_at) VALUES ('h', 'm', 's', 'no-change', 0)"
            )
        with db.read() as conn:
            assert conn.execute("SELECT COUNT(*) FROM observation_history").fetchone()[0] == 1
    holder.close()


def test_ulids_increase_within_a_millisecond_and_across_a_clock_step_back() -> None:
    factory = MonotonicUlid()
    ids = [factory.new(1_000) for _ in range(100)] + [factory.new(900), factory.new(2_000)]
    assert ids == sorted(ids)
    assert len(set(ids)) == len(ids)
    assert all(len(item) == 26 for item in ids)
