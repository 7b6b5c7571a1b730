"""The shortcut for an unchanged tree gives what the full comparison gives, at its edges."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentmonitors.sources.file_fingerprint import FileFingerprintSource
from tests.sources.test_file_fingerprint import Monitor, later, sha, write


@pytest.fixture
def settled(tmp_path: Path) -> tuple[Monitor, Path, Path]:
    """A baselined monitor over two settled files."""
    workspace = tmp_path / "ws"
    a = write(workspace / "a.txt", "aaaa", old=True)
    b = write(workspace / "b.txt", "bbbb", old=True)
    monitor = Monitor({"globs": "*.txt"}, workspace, FileFingerprintSource(later))
    monitor.observe()
    assert set(monitor.state["stats"]) == {str(a), str(b)}
    return monitor, a, b


def test_a_stored_stat_key_of_a_path_no_longer_tracked_is_dropped(
    settled: tuple[Monitor, Path, Path],
) -> None:
    monitor, a, b = settled
    stale = {**monitor.state["stats"], "/elsewhere/c.txt": [1, 2, 3, 4]}
    monitor.state = {**monitor.state, "stats": stale}
    result = monitor.observe()
    assert result.observations == []
    assert result.has_next_state
    assert set(result.next_state["stats"]) == {str(a), str(b)}


def test_a_null_stored_hash_is_read_again_not_kept(settled: tuple[Monitor, Path, Path]) -> None:
    monitor, a, _ = settled
    monitor.state = {
        **monitor.state,
        "fingerprints": {**monitor.state["fingerprints"], str(a): None},
    }
    result = monitor.observe()
    assert result.has_next_state
    assert result.next_state["fingerprints"][str(a)] == sha("aaaa")


def test_a_rename_keeps_the_count_but_is_a_deletion_and_a_creation(
    settled: tuple[Monitor, Path, Path],
) -> None:
    monitor, a, _ = settled
    renamed = a.with_name("c.txt")
    os.rename(a, renamed)
    kinds = {(item.object_key, item.change_kind) for item in monitor.observe().observations}
    assert kinds == {(str(a), "deleted"), (str(renamed), "created")}
    assert str(a) not in monitor.state["fingerprints"]


def test_one_moved_stat_key_among_many_unchanged_is_stored(
    settled: tuple[Monitor, Path, Path],
) -> None:
    monitor, _, b = settled
    os.utime(b)  # same bytes, new mtime
    result = monitor.observe()
    assert result.observations == []
    assert result.has_next_state
    assert result.next_state["stats"][str(b)][1] == os.stat(b).st_mtime_ns


def test_nothing_matched_before_or_now_keeps_the_state_and_says_so(tmp_path: Path) -> None:
    monitor = Monitor({"globs": "*.txt"}, tmp_path, FileFingerprintSource(later))
    assert monitor.observe().outcome == "no-files-matched"
    again = monitor.observe()
    assert (again.observations, again.outcome, again.has_next_state) == (
        [],
        "no-files-matched",
        False,
    )
