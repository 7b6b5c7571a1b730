"""A file-fingerprint state is stored one row per folder; a change writes its folder only.

Over 100,000 files the state is ~21 MB of JSON: written as one value, each changed
file rewrote all of it. These drive the runtime on a real SQLite file, in a daemon (the
state remembered between ticks) and as a fresh ``daemon once`` process would (nothing
remembered), with triggers counting what is written.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from pathlib import Path
from typing import Any

from agentmonitors.clock import ManualClock
from agentmonitors.daemon.compose import workspace_runtime
from agentmonitors.runtime.tick import Runtime, TickResult
from agentmonitors.sources.base import SourceRegistry
from agentmonitors.sources.file_fingerprint import RACY_WINDOW_NS, FileFingerprintSource
from agentmonitors.sources.file_fingerprint.folders import INDEX_PART
from agentmonitors.store import queries
from agentmonitors.store.database import Database
from agentmonitors.store.state_parts import PARTED

START = 1_780_000_000_000

COUNT_WRITES = (
    "CREATE TABLE part_writes (part TEXT)",
    "CREATE TRIGGER part_inserted AFTER INSERT ON monitor_state_parts"
    " BEGIN INSERT INTO part_writes VALUES (new.part); END",
    "CREATE TRIGGER part_updated AFTER UPDATE ON monitor_state_parts"
    " BEGIN INSERT INTO part_writes VALUES (new.part); END",
)


class Tree:
    """``src/d0..d4`` of five files each, one monitor over ``src/**/*.txt``."""

    def __init__(self, tmp_path: Path) -> None:
        self.workspace = tmp_path / "ws"
        for folder in range(5):
            for name in range(5):
                path = self.workspace / "src" / f"d{folder}" / f"f{name}.txt"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(f"{folder}/{name}\n")
        monitor = self.workspace / ".claude" / "monitors" / "files" / "MONITOR.md"
        monitor.parent.mkdir(parents=True)
        monitor.write_text(
            "---\nwatch:\n  type: file-fingerprint\n  globs: 'src/**/*.txt'\n"
            "  interval: 1s\n---\nAct.\n"
        )
        self.db_path = tmp_path / "inbox.db"
        self.clock = ManualClock(START)
        self.db = Database(str(self.db_path))
        self.runtime = self.fresh_runtime()

    def fresh_runtime(self) -> Runtime:
        """A runtime whose source remembers nothing, as in a new process."""
        registry = SourceRegistry()
        # Every file counts as settled at once, as it would be a few seconds later.
        registry.register(FileFingerprintSource(lambda: time.time_ns() + 2 * RACY_WINDOW_NS))
        return workspace_runtime(self.db, str(self.workspace), registry, clock=self.clock)

    def tick(self) -> TickResult:
        self.clock.advance(2_000)
        return asyncio.run(self.runtime.tick())

    def folder(self, index: int) -> str:
        return str(self.workspace / "src" / f"d{index}")

    def count_writes(self) -> None:
        with self.db.write() as conn:
            for statement in COUNT_WRITES:
                conn.execute(statement)

    def written(self) -> list[str]:
        """The parts written since the last call."""
        with self.db.write() as conn:
            parts = [row[0] for row in conn.execute("SELECT part FROM part_writes")]
            conn.execute("DELETE FROM part_writes")
        return sorted(parts)

    def stored(self) -> tuple[str, dict[str, Any]]:
        """The ``source_state`` column, and the state the store reads back."""
        with self.db.read() as conn:
            column = conn.execute(
                "SELECT source_state FROM monitor_state WHERE monitor_id = 'files'"
            ).fetchone()[0]
            state = queries.load_source_state(conn, "files", str(self.workspace))
        return column, dict(state)

    def truth(self) -> dict[str, str]:
        return {
            str(path): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in (self.workspace / "src").rglob("*.txt")
        }

    def parts(self) -> int:
        """The rows of the state: one per folder, and the folders' tokens (INDEX_PART)."""
        with self.db.read() as conn:
            return int(conn.execute("SELECT COUNT(*) FROM monitor_state_parts").fetchone()[0])


def test_a_change_writes_only_its_folders_row(tmp_path: Path) -> None:
    tree = Tree(tmp_path)
    try:
        tree.tick()
        column, state = tree.stored()
        assert column == PARTED
        assert state["fingerprints"] == tree.truth()
        assert tree.parts() == 5 + 1
        tree.count_writes()

        # In a daemon, the stored state is remembered between ticks.
        (tree.workspace / "src" / "d2" / "f1.txt").write_text("edited\n")
        assert len(tree.tick().emitted_event_ids) == 1
        assert tree.written() == [INDEX_PART, tree.folder(2)]

        # A fresh process (``daemon once``) reads the parts and writes back one.
        tree.runtime = tree.fresh_runtime()
        (tree.workspace / "src" / "d3" / "f0.txt").unlink()
        (tree.workspace / "src" / "d3" / "new.txt").write_text("new\n")
        assert len(tree.tick().emitted_event_ids) == 2
        assert tree.written() == [INDEX_PART, tree.folder(3)]
        assert tree.stored()[1]["fingerprints"] == tree.truth()

        # A folder whose files all went leaves no row behind.
        for path in (tree.workspace / "src" / "d4").iterdir():
            path.unlink()
        assert len(tree.tick().emitted_event_ids) == 5
        assert tree.parts() == 4 + 1
        assert tree.stored()[1]["fingerprints"] == tree.truth()
    finally:
        tree.db.close()


def test_a_state_stored_in_one_row_is_read_then_stored_in_parts(tmp_path: Path) -> None:
    """A database of schema version 5 holds the state as one value: it opens, its
    state is compared against as it is, and the next change stores it in parts."""
    tree = Tree(tmp_path)
    tree.tick()
    _, state = tree.stored()
    with tree.db.write() as conn:
        conn.execute("DROP TRIGGER monitor_state_parts_follow_row")
        conn.execute("DROP TRIGGER monitor_state_parts_follow_state")
        conn.execute("DROP TABLE monitor_state_parts")
        conn.execute(
            "UPDATE monitor_state SET source_state = ? WHERE monitor_id = 'files'",
            (json.dumps(state),),
        )
        conn.execute("PRAGMA user_version = 5")
    tree.db.close()

    tree.db = Database(str(tree.db_path))
    try:
        tree.runtime = tree.fresh_runtime()
        assert tree.tick().emitted_event_ids == []  # the one-row state is the baseline
        assert tree.stored()[0] != PARTED
        (tree.workspace / "src" / "d0" / "f0.txt").write_text("edited\n")
        assert len(tree.tick().emitted_event_ids) == 1
        column, moved = tree.stored()
        assert column == PARTED
        assert tree.parts() == 5 + 1
        assert moved["fingerprints"] == tree.truth()
    finally:
        tree.db.close()


def test_the_parts_go_with_their_state(tmp_path: Path) -> None:
    """Rewritten as one value by any writer, or its row deleted (retention, a removed
    watch), a state leaves no parts behind."""
    tree = Tree(tmp_path)
    try:
        tree.tick()
        assert tree.parts() == 5 + 1
        with tree.db.write() as conn:
            conn.execute("UPDATE monitor_state SET source_state = '{}' WHERE monitor_id = 'files'")
        assert tree.parts() == 0
        assert tree.stored()[1] == {}

        tree.tick()  # a baseline again, in parts
        assert tree.parts() == 5 + 1
        with tree.db.write() as conn:
            conn.execute("DELETE FROM monitor_state WHERE monitor_id = 'files'")
        assert tree.parts() == 0
    finally:
        tree.db.close()
