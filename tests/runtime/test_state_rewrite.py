"""A tick that observes no change leaves the stored source state as it is.

A file-fingerprint state holds a hash and a stat key per matched file; rewriting it on
every tick would cost more than the stat-based check itself. A trigger on the real
SQLite file counts every write of ``source_state``.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from agentmonitors.clock import ManualClock
from agentmonitors.daemon.compose import workspace_runtime
from agentmonitors.runtime.tick import TickResult
from agentmonitors.sources.base import SourceRegistry
from agentmonitors.sources.file_fingerprint import RACY_WINDOW_NS, FileFingerprintSource
from agentmonitors.store import queries
from agentmonitors.store.database import Database

START = 1_780_000_000_000

COUNT_WRITES = (
    "CREATE TABLE state_writes (monitor_id TEXT)",
    "CREATE TRIGGER state_inserted AFTER INSERT ON monitor_state"
    " BEGIN INSERT INTO state_writes VALUES (new.monitor_id); END",
    "CREATE TRIGGER state_rewritten AFTER UPDATE OF source_state ON monitor_state"
    " BEGIN INSERT INTO state_writes VALUES (new.monitor_id); END",
)


class Files:
    """One file-fingerprint monitor over ``*.txt``, ticked by a manual clock."""

    def __init__(self, workspace: Path, db_path: Path) -> None:
        self.workspace = workspace
        self.clock = ManualClock(START)
        registry = SourceRegistry()
        # Every file counts as settled at once, as it would be a few seconds later.
        registry.register(FileFingerprintSource(lambda: time.time_ns() + 2 * RACY_WINDOW_NS))
        folder = workspace / ".claude" / "monitors" / "files"
        folder.mkdir(parents=True)
        (folder / "MONITOR.md").write_text(
            "---\nwatch:\n  type: file-fingerprint\n  globs: '*.txt'\n  interval: 1s\n---\nAct.\n"
        )
        self.db = Database(str(db_path))
        self.runtime = workspace_runtime(self.db, str(workspace), registry, clock=self.clock)

    def tick(self) -> TickResult:
        self.clock.advance(2_000)
        return asyncio.run(self.runtime.tick())

    def count_writes(self) -> None:
        with self.db.write() as conn:
            for statement in COUNT_WRITES:
                conn.execute(statement)

    def writes(self) -> int:
        with self.db.read() as conn:
            return int(conn.execute("SELECT COUNT(*) FROM state_writes").fetchone()[0])

    def row(self) -> dict[str, Any]:
        with self.db.read() as conn:
            last = conn.execute(
                "SELECT last_observation_at FROM monitor_state WHERE monitor_id = 'files'"
            ).fetchone()[0]
            # The state as the store reads it back, whether in one value or in parts.
            state = queries.load_source_state(conn, "files", str(self.workspace))
        return {"last": last, "state": dict(state)}


def two_files(tmp_path: Path) -> tuple[Path, Files]:
    """A workspace holding ``a.txt`` and ``b.txt``, and its monitor."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("alpha\n")
    (workspace / "b.txt").write_text("beta\n")
    return workspace, Files(workspace, tmp_path / "inbox.db")


def test_an_unchanged_state_is_not_rewritten_and_a_change_still_is(tmp_path: Path) -> None:
    workspace, files = two_files(tmp_path)
    try:
        baseline = files.tick()
        assert baseline.evaluated_monitors == ["files"]
        files.count_writes()
        stored = files.row()
        assert set(stored["state"]["fingerprints"]) == {
            str(workspace / "a.txt"),
            str(workspace / "b.txt"),
        }
        assert set(stored["state"]["stats"]) == set(stored["state"]["fingerprints"])

        quiet = files.tick()
        assert quiet.evaluated_monitors == ["files"]
        assert quiet.emitted_event_ids == []
        assert files.writes() == 0
        after = files.row()
        assert after["state"] == stored["state"]
        assert after["last"] == stored["last"] + 2  # the observation itself is recorded

        (workspace / "a.txt").write_text("alpha, edited\n")
        changed = files.tick()
        assert len(changed.emitted_event_ids) == 1
        assert files.writes() == 1
        edited = files.row()["state"]["fingerprints"][str(workspace / "a.txt")]
        assert edited != stored["state"]["fingerprints"][str(workspace / "a.txt")]
    finally:
        files.db.close()


def test_a_kept_state_is_written_when_its_row_has_gone(tmp_path: Path) -> None:
    with Database(str(tmp_path / "inbox.db")) as db:
        with db.write() as conn:
            queries.save_monitor_state(
                conn,
                "files",
                "/ws",
                now_ms=START,
                last_observation_at_ms=START,
                source_state={"fingerprints": {}},
                notify_state={},
                source_unchanged=True,
            )
        with db.read() as conn:
            state = queries.load_monitor_state(conn, "files", "/ws")
    assert state is not None
    assert state.source_state == {"fingerprints": {}}
    assert state.last_observation_at_ms == START


def test_an_unchanged_tick_never_reads_the_stored_state(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    for index in range(20):
        (workspace / f"f{index}.txt").write_text(f"file {index}\n")
    files = Files(workspace, tmp_path / "inbox.db")
    try:
        files.tick()
        files.tick()  # a state from before tokens would be read once here
        statements: list[str] = []
        files.db.conn.set_trace_callback(statements.append)
        try:
            quiet = files.tick()
        finally:
            files.db.conn.set_trace_callback(None)
        assert quiet.evaluated_monitors == ["files"] and quiet.emitted_event_ids == []
        reads = [sql for sql in statements if "SELECT" in sql and "source_state" in sql]
        assert reads == []
        assert any("UPDATE monitor_state" in sql for sql in statements)
    finally:
        files.db.close()


def test_a_state_rewritten_by_another_writer_is_compared_again(tmp_path: Path) -> None:
    """The token cannot vouch for a state it was not stored with: when another
    implementation rewrites the state (here, with an older hash of ``a.txt``), the
    next tick compares against that state and reports the difference."""
    workspace, files = two_files(tmp_path)
    try:
        files.tick()
        assert files.tick().emitted_event_ids == []
        state = files.row()["state"]
        older = {**state["fingerprints"], str(workspace / "a.txt"): "0" * 64}
        with files.db.write() as conn:
            conn.execute(
                "UPDATE monitor_state SET source_state = ? WHERE monitor_id = 'files'",
                (json.dumps({"fingerprints": older}),),
            )
        changed = files.tick()
        assert len(changed.emitted_event_ids) == 1
        with files.db.read() as conn:
            title = conn.execute(
                "SELECT title FROM monitor_events WHERE id = ?", (changed.emitted_event_ids[0],)
            ).fetchone()[0]
        assert title == f"File changed: {workspace / 'a.txt'}"
    finally:
        files.db.close()
