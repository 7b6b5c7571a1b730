"""What a daemon keeps in memory for a large file-fingerprint state, and its peak.

The daemon's process keeps the peak of its first look at a tree as its size (freed
memory is seldom given back), so both are bounded per file: its first look reads the
stored state once (docs/architecture.md, "Speed"). Measured with tracemalloc over a
real runtime on a real SQLite file, a tree of 3,000 files in 30 folders; a restart is
a fresh runtime marked resident, as ``daemon run`` marks its own.
"""

from __future__ import annotations

import asyncio
import gc
import time
import tracemalloc
from pathlib import Path

from agentmonitors.clock import ManualClock
from agentmonitors.daemon.compose import workspace_runtime
from agentmonitors.runtime.tick import Runtime
from agentmonitors.sources.base import SourceRegistry
from agentmonitors.sources.file_fingerprint import RACY_WINDOW_NS, FileFingerprintSource
from agentmonitors.store.database import Database

FOLDERS, PER_FOLDER = 20, 100
START = 1_780_000_000_000


def daemon_runtime(db: Database, workspace: Path, clock: ManualClock) -> Runtime:
    registry = SourceRegistry()
    registry.register(FileFingerprintSource(lambda: time.time_ns() + 2 * RACY_WINDOW_NS))
    runtime = workspace_runtime(db, str(workspace), registry, clock=clock)
    runtime.resident = True
    return runtime


def test_a_daemons_first_look_at_a_stored_tree_is_bounded_per_file(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    for folder in range(FOLDERS):
        for name in range(PER_FOLDER):
            path = workspace / "src" / f"d{folder:02}" / f"file-{name:03}.txt"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"{folder}/{name}\n")
    monitor = workspace / ".claude" / "monitors" / "files" / "MONITOR.md"
    monitor.parent.mkdir(parents=True)
    monitor.write_text(
        "---\nwatch:\n  type: file-fingerprint\n  globs: 'src/**/*.txt'\n---\nAct.\n"
    )
    clock = ManualClock(START)
    db = Database(str(tmp_path / "inbox.db"))
    try:
        asyncio.run(daemon_runtime(db, workspace, clock).tick())  # the baseline
        # One file changed while no daemon ran: the first look compares, and keeps.
        (workspace / "src" / "d07" / "file-003.txt").write_text("edited\n")
        clock.advance(3_600_000)
        restarted = daemon_runtime(db, workspace, clock)
        gc.collect()
        tracemalloc.start()
        try:
            result = asyncio.run(restarted.tick())
            gc.collect()
            kept, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert len(result.emitted_event_ids) == 1
        files = FOLDERS * PER_FOLDER
        # Each file's path, hash and stat key kept once. At the peak, the stored state
        # is decoded after the walk's lists went (the moved folder compared alone),
        # its parts' texts are not kept beside what they decode to, and each folder's
        # paths are a tuple, not a set. (Before: ~690 B kept and ~1,850 B at the peak
        # a file; now ~610 and ~1,020.)
        assert kept / files < 650, kept / files
        assert peak / files < 1_250, peak / files
    finally:
        db.close()
