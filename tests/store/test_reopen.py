"""Database.file_problem and reopen on real files: deleted, replaced, reached by a link."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentmonitors.store.database import Database, StoreError

INSERT = (
    "INSERT INTO agent_sessions (id, adapter, host_session_id, agent_identity,"
    " hook_state_path, status, baseline_at, last_active_at, created_at, updated_at)"
    " VALUES (?, 'claude-code', ?, 'a', '/h', 'active', 1, 1, 1, 1)"
)


def sessions(db: Database) -> list[str]:
    with db.read() as conn:
        return [row[0] for row in conn.execute("SELECT id FROM agent_sessions ORDER BY id")]


def add_session(db: Database, session_id: str) -> None:
    with db.write() as conn:
        conn.execute(INSERT, (session_id, session_id))


def test_a_deleted_file_is_noticed_and_reopened_empty_without_its_old_log(
    tmp_path: Path,
) -> None:
    path = tmp_path / "inbox.db"
    db = Database(str(path))
    add_session(db, "s1")  # lives in the write-ahead log until a checkpoint
    assert db.file_problem() is None

    os.remove(path)
    assert db.file_problem() == "deleted"
    db.reopen()

    assert path.exists()
    assert db.file_problem() is None
    # The old log must not be replayed into the new file.
    assert sessions(db) == []
    add_session(db, "s2")
    db.close()
    with Database(str(path)) as again:
        assert sessions(again) == ["s2"]


def test_a_file_replaced_by_garbage_cannot_be_reopened_and_says_which(tmp_path: Path) -> None:
    path = tmp_path / "inbox.db"
    db = Database(str(path))
    add_session(db, "s1")
    scratch = tmp_path / "scratch"
    scratch.write_bytes(b"not a database " * 200)
    os.replace(scratch, path)

    assert db.file_problem() == "replaced"
    with pytest.raises(StoreError, match=f"database {path}: file is not a database"):
        db.reopen()


def test_a_database_reached_through_a_symlink_is_not_a_replacement(tmp_path: Path) -> None:
    real = tmp_path / "real.db"
    link = tmp_path / "link.db"
    link.symlink_to(real)
    db = Database(str(link))
    add_session(db, "s1")

    assert [db.file_problem() for _ in range(3)] == [None, None, None]
    assert sessions(db) == ["s1"]
    db.close()


def test_an_in_memory_database_has_no_file_to_lose() -> None:
    db = Database(":memory:")
    assert db.file_problem() is None
    db.close()
