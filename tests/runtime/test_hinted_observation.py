"""A file event's paths are observed alone: one changed file costs what it costs.

The daemon hands the paths its file events named to the tick; a file-fingerprint
monitor that is not due by its schedule looks at just those paths (a ``stat`` and a
hash each), never walking its tree, and stores what a walk would have stored. What
paths cannot tell (a folder moved in whole) is walked. The scheduled observation
stays due on time: the periodic walk is the truth. Real SQLite, real files; the walk
is counted by wrapping the function that does it.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import time
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.clock import ManualClock
from agentmonitors.daemon.compose import workspace_runtime
from agentmonitors.runtime.tick import TickResult
from agentmonitors.sources import file_fingerprint
from agentmonitors.sources.base import SourceRegistry
from agentmonitors.sources.file_fingerprint import RACY_WINDOW_NS, FileFingerprintSource
from agentmonitors.store import queries
from agentmonitors.store.database import Database

START = 1_780_000_000_000


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class Tree:
    """One file-fingerprint monitor over ``src/**/*.txt`` (hourly), on a manual clock."""

    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.workspace = tmp_path / "ws"
        for folder in range(5):
            for name in range(5):
                path = self.workspace / "src" / f"d{folder}" / f"f{name}.txt"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(f"{folder}/{name}\n")
        self.clock = ManualClock(START)
        registry = SourceRegistry()
        # Every file counts as settled at once, as it would be a few seconds later.
        registry.register(FileFingerprintSource(lambda: time.time_ns() + 2 * RACY_WINDOW_NS))
        monitor = self.workspace / ".claude" / "monitors" / "files" / "MONITOR.md"
        monitor.parent.mkdir(parents=True)
        monitor.write_text(
            "---\nwatch:\n  type: file-fingerprint\n  globs: 'src/**/*.txt'\n"
            "  interval: 1h\n---\nAct.\n"
        )
        self.db = Database(str(tmp_path / "inbox.db"))
        self.runtime = workspace_runtime(self.db, str(self.workspace), registry, clock=self.clock)
        self.walks = 0
        walk = file_fingerprint.confined_stat_keys

        def counted(*args: Any) -> Any:
            self.walks += 1
            return walk(*args)

        monkeypatch.setattr(file_fingerprint, "confined_stat_keys", counted)

    def tick(self, changed: dict[str, frozenset[str] | None] | None = None) -> TickResult:
        self.clock.advance(2_000)
        return asyncio.run(self.runtime.tick(changed or (), (), changed))

    def hinted(self, *paths: Path) -> TickResult:
        return self.tick({"files": frozenset(str(path) for path in paths)})

    def stored(self) -> tuple[int, dict[str, Any]]:
        with self.db.read() as conn:
            row = queries.load_monitor_state(conn, "files", str(self.workspace))
        assert row is not None and row.last_observation_at_ms is not None
        return row.last_observation_at_ms // 1000, dict(row.source_state)

    def titles(self, result: TickResult) -> list[str]:
        with self.db.read() as conn:
            return [
                conn.execute(
                    "SELECT title FROM monitor_events WHERE id = ?", (event_id,)
                ).fetchone()[0]
                for event_id in result.emitted_event_ids
            ]

    def stats_hold(self) -> bool:
        """Whether every stored stat key is its file's own (and only tracked files have one)."""
        _, state = self.stored()
        for path, key in state["stats"].items():
            info = os.stat(path)
            if key != [info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino]:
                return False
        return set(state["stats"]) <= set(state["fingerprints"])

    def truth(self) -> dict[str, str]:
        """What a walk of the tree finds: every matched file's hash."""
        return {str(path): sha(path) for path in sorted((self.workspace / "src").rglob("*.txt"))}


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Tree:
    built = Tree(tmp_path, monkeypatch)
    built.tick()  # the baseline: a walk
    assert built.walks == 1
    return built


def test_a_changed_file_is_observed_without_walking_the_tree(tree: Tree) -> None:
    scheduled_at, _ = tree.stored()
    edited = tree.workspace / "src" / "d3" / "f1.txt"
    edited.write_text("edited\n")
    created = tree.workspace / "src" / "d0" / "new.txt"
    created.write_text("new\n")
    deleted = tree.workspace / "src" / "d4" / "f4.txt"
    deleted.unlink()
    ignored = tree.workspace / "src" / "d1" / "notes.md"
    ignored.write_text("not matched\n")

    result = tree.hinted(edited, created, deleted, ignored)

    assert tree.walks == 1  # the baseline's only
    assert sorted(tree.titles(result)) == [
        f"File changed: {edited}",
        f"File created: {created}",
        f"File deleted: {deleted}",
    ]
    last, state = tree.stored()
    assert state["fingerprints"] == tree.truth()
    # Not the scheduled observation: the hourly walk is still due when it was.
    assert last == scheduled_at
    assert tree.stats_hold()
    # A hint about nothing that matters changes nothing and walks nothing.
    assert tree.titles(tree.hinted(ignored)) == []
    assert tree.walks == 1
    # Hinted again: the state this daemon stored is built on, not read back.
    edited.write_text("edited again\n")
    assert tree.titles(tree.hinted(edited)) == [f"File changed: {edited}"]
    assert tree.stored()[1]["fingerprints"] == tree.truth()
    assert tree.stats_hold()
    # The scheduled walk finds nothing more: the hinted state was the truth.
    tree.clock.advance(3_600_000)
    assert tree.titles(tree.tick()) == []
    assert tree.walks == 2
    assert tree.stored()[1]["fingerprints"] == tree.truth()
    assert tree.stats_hold()
    # After a walk that moved the state, the next hint still stores the whole truth.
    created.write_text("newer\n")
    tree.hinted(created)
    (tree.workspace / "src" / "d2" / "f2.txt").write_text("walked\n")
    tree.clock.advance(3_600_000)
    assert len(tree.titles(tree.tick())) == 1
    edited.write_text("third\n")
    assert tree.titles(tree.hinted(edited)) == [f"File changed: {edited}"]
    assert tree.stored()[1]["fingerprints"] == tree.truth()
    assert tree.stats_hold()


def test_a_removed_folder_reports_each_file_without_a_walk(tree: Tree) -> None:
    folder = tree.workspace / "src" / "d2"
    for path in folder.iterdir():
        path.unlink()
    folder.rmdir()

    result = tree.hinted(folder)

    assert tree.walks == 1
    assert sorted(tree.titles(result)) == [
        f"File deleted: {folder / f'f{n}.txt'}" for n in range(5)
    ]
    assert tree.stored()[1]["fingerprints"] == tree.truth()


def test_what_the_paths_cannot_tell_is_walked(tree: Tree, tmp_path: Path) -> None:
    # A folder moved in whole: inotify names the folder, never the files inside it.
    outside = tmp_path / "staging"
    outside.mkdir()
    (outside / "a.txt").write_text("a\n")
    moved = tree.workspace / "src" / "d9"
    os.rename(outside, moved)

    result = tree.hinted(moved)

    assert tree.walks == 2
    assert tree.titles(result) == [f"File created: {moved / 'a.txt'}"]
    # Unknown paths (a lost event): a walk too.
    (tree.workspace / "src" / "d0" / "f0.txt").write_text("changed\n")
    assert tree.titles(tree.tick({"files": None})) == [
        f"File changed: {tree.workspace / 'src' / 'd0' / 'f0.txt'}"
    ]
    assert tree.walks == 3
    assert tree.stored()[1]["fingerprints"] == tree.truth()
