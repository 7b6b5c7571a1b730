"""Large files: hashed in chunks, and their text kept only under the snapshot cap.

The memory figure itself is printed by benchmarks/bench_large_file_memory.py (a real
300 MiB sparse file under a real daemon); here the observable contract is checked: a
change above the cap is still reported, says it has no diff, and stores no snapshot.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from agentmonitors.sources.file_fingerprint import SNAPSHOT_CAP_BYTES
from tests.conftest import CliResult
from tests.daemon.clocked import ClockedDaemon
from tests.sources.test_file_fingerprint import Monitor, sha, write
from tests.transports.clocked_project import Run

NOTE = "(over the 1 MiB snapshot cap: no diff)"


def patterned(size: int, seed: int = 0) -> bytes:
    """Bytes that differ across chunk boundaries, so a chunking slip changes the hash."""
    block = bytes((seed + index) % 251 for index in range(251))
    return (block * (size // len(block) + 1))[:size]


def test_a_file_over_the_cap_is_hashed_whole_and_reported_without_text(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    big = write(ws / "big.bin", patterned(100), old=True)
    monitor = Monitor({"globs": "*.bin"}, ws)
    monitor.observe()

    content = patterned(3 * SNAPSHOT_CAP_BYTES + 7, seed=1)
    write(big, content, old=True)
    (changed,) = monitor.observe().observations
    assert changed.change_kind == "modified"
    assert changed.payload == {
        "filePath": str(big),
        "previousHash": sha(patterned(100)),
        "currentHash": hashlib.sha256(content).hexdigest(),
    }
    assert changed.snapshot_text is None
    assert changed.summary == f"File changed: {big} {NOTE}"
    assert changed.title == f"File changed: {big}"


def test_a_file_at_the_cap_keeps_its_text_and_one_byte_more_does_not(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    monitor = Monitor({"globs": "*.txt"}, ws)
    monitor.observe()
    write(ws / "at.txt", "a" * SNAPSHOT_CAP_BYTES, old=True)
    write(ws / "over.txt", "a" * (SNAPSHOT_CAP_BYTES + 1), old=True)
    created = {obs.object_key: obs for obs in monitor.observe().observations}
    at, over = created[str(ws / "at.txt")], created[str(ws / "over.txt")]
    assert at.snapshot_text == "a" * SNAPSHOT_CAP_BYTES
    assert at.summary == f"File created: {ws / 'at.txt'}"
    assert over.snapshot_text is None
    assert over.summary == f"File created: {ws / 'over.txt'} {NOTE}"


BIG = """---
watch:
  type: file-fingerprint
  globs: "data/*.log"
urgency: normal
---
Look at the log.
"""


@pytest.fixture
def big_project(isolated_environment: Path, run_cli: Run) -> Path:
    root = isolated_environment
    result: CliResult = run_cli("init", "--enable-only")
    assert result.code == 0, result.err
    folder = root / ".claude" / "monitors" / "logs"
    folder.mkdir(parents=True)
    (folder / "MONITOR.md").write_text(BIG)
    (root / "data").mkdir()
    (root / "data" / "app.log").write_text("start\n")
    return root


@pytest.mark.slow
def test_the_daemon_reports_a_sparse_file_over_the_cap_and_stores_no_snapshot(
    big_project: Path, tmp_path: Path
) -> None:
    log = big_project / "data" / "app.log"
    daemon = ClockedDaemon(big_project, tmp_path / "clock")
    daemon.start()
    try:
        # A sparse file: its size is real to every reader, its blocks are not on disk.
        with open(log, "r+b") as handle:
            handle.truncate(64 * SNAPSHOT_CAP_BYTES)
        daemon.advance(31)
        daemon.tick()
        (event,) = daemon.query(
            "SELECT id, title, summary, snapshot_text, diff_text FROM monitor_events"
        )
        event_id, title, summary, text, diff = event
        assert title == f"File changed: {log}"
        assert summary == f"File changed: {log} {NOTE}"
        assert (text, diff) == (None, None)
        assert daemon.query("SELECT 1 FROM monitor_snapshots WHERE event_id = ?", event_id) == []

        # Back under the cap: the text is kept again (and there is nothing to diff it with).
        # Replaced in one step: the daemon's watcher must not catch it half-written.
        scratch = log.with_suffix(".next")
        scratch.write_text("small again\n")
        os.replace(scratch, log)
        daemon.advance(31)
        daemon.tick()
        rows = daemon.query(
            "SELECT e.snapshot_text, s.content FROM monitor_events e"
            " JOIN monitor_snapshots s ON s.event_id = e.id"
        )
        assert rows == [("small again\n", "small again\n")]
    finally:
        daemon.stop()
