"""The state token: an unchanged tree is recognised without reading the stored state.

Each observation here carries the previous result's state and token, as the runtime
does; the stored state is handed over unread (``ObservationContext.deferred``) and
the test counts whether the source asked for it.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.sources.file_fingerprint import (
    RACY_WINDOW_NS,
    FileFingerprintSource,
    tree_token,
)
from agentmonitors.sources.file_globs import compile_patterns, matched_files
from agentmonitors.sources.observation import ObservationContext, ObservationResult
from tests.sources.test_file_fingerprint import write


def later() -> int:
    """A wall clock far enough ahead that every file counts as settled."""
    return time.time_ns() + 2 * RACY_WINDOW_NS


class TokenMonitor:
    """A file-fingerprint monitor whose state and token persist between observations."""

    def __init__(self, workspace: Path, clock: Any = later) -> None:
        self.workspace = workspace
        self.source = FileFingerprintSource(clock)
        self.state: Any = None
        self.token: str | None = None
        self.reads = 0
        self.resident = False  # as the daemon's runtime says

    def _stored(self) -> Any:
        self.reads += 1
        return self.state

    def observe(self, changed: frozenset[str] | None = None) -> ObservationResult:
        context = ObservationContext.deferred(
            self._stored,
            1_700_000_000_000,
            str(self.workspace),
            "files",
            frozenset(),
            self.token,
            changed_paths=changed,
            resident=self.resident,
        )
        result = asyncio.run(self.source.observe({"globs": "**/*.txt"}, context))
        if result.has_next_state:
            self.state = result.next_state
        self.token = result.state_token
        return result


@pytest.fixture
def baselined(tmp_path: Path) -> TokenMonitor:
    write(tmp_path / "a.txt", "alpha", old=True)
    write(tmp_path / "sub" / "b.txt", "beta", old=True)
    monitor = TokenMonitor(tmp_path)
    first = monitor.observe()
    assert first.observations == [] and first.has_next_state
    assert first.state_token is not None
    monitor.reads = 0
    return monitor


def test_an_unchanged_tree_is_kept_without_reading_the_state(baselined: TokenMonitor) -> None:
    token = baselined.token
    for _ in range(3):
        result = baselined.observe()
        assert (result.observations, result.has_next_state) == ([], False)
        assert result.state_token == token
    assert baselined.reads == 0


@pytest.mark.parametrize(
    "change",
    [
        lambda root: (root / "a.txt").write_text("alpha, edited"),
        lambda root: write(root / "c.txt", "new"),
        lambda root: (root / "sub" / "b.txt").unlink(),
        lambda root: os.rename(root / "a.txt", root / "z.txt"),
    ],
    ids=["content", "created", "deleted", "renamed"],
)
def test_any_change_reads_the_state_and_reports_it(baselined: TokenMonitor, change: Any) -> None:
    token = baselined.token
    change(baselined.workspace)
    # A new process (``daemon once``) has only the store; a daemon's source remembers
    # the state it stored (tests/sources/test_file_fingerprint_scoped.py).
    baselined.source = FileFingerprintSource(later)
    result = baselined.observe()
    assert baselined.reads == 1
    assert result.observations != []
    assert result.state_token not in (None, token)
    baselined.reads = 0
    quiet = baselined.observe()
    assert (quiet.observations, quiet.has_next_state, baselined.reads) == ([], False, 0)


def test_a_daemon_reads_the_stored_state_at_its_first_look_not_at_its_first_event(
    baselined: TokenMonitor,
) -> None:
    # A daemon starting over a stored state: its first look, unchanged, reads it once...
    baselined.source = FileFingerprintSource(later)
    baselined.resident = True
    first = baselined.observe()
    assert (first.observations, first.has_next_state, baselined.reads) == ([], False, 1)
    baselined.reads = 0
    assert (baselined.observe().observations, baselined.reads) == ([], 0)
    # ...so the first file event it answers costs no read of the store.
    edited = baselined.workspace / "a.txt"
    edited.write_text("alpha, edited")
    result = baselined.observe(changed=frozenset({str(edited)}))
    assert [item.object_key for item in result.observations] == [str(edited)]
    assert baselined.reads == 0


def test_a_rewrite_that_restores_the_mtime_is_still_seen(baselined: TokenMonitor) -> None:
    path = baselined.workspace / "a.txt"
    before = os.stat(path)
    path.write_text("ALPHA")  # same size
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    result = baselined.observe()
    assert [item.change_kind for item in result.observations] == ["modified"]


def test_a_file_not_yet_settled_gives_no_token_until_it_is(tmp_path: Path) -> None:
    write(tmp_path / "a.txt", "alpha", old=True)
    write(tmp_path / "fresh.txt", "just written")
    now = [time.time_ns()]
    monitor = TokenMonitor(tmp_path, clock=lambda: now[0])
    assert monitor.observe().state_token is None
    monitor.reads = 0
    assert monitor.observe().state_token is None
    assert monitor.reads == 1  # no token: the state is read, the fresh file hashed again
    now[0] += 2 * RACY_WINDOW_NS
    settled = monitor.observe()
    assert settled.state_token is not None
    monitor.reads = 0
    monitor.observe()
    assert monitor.reads == 0


def test_a_state_stored_before_tokens_is_read_once_then_tokened(baselined: TokenMonitor) -> None:
    baselined.token = None  # as stored by an older version or another implementation
    result = baselined.observe()
    assert (result.observations, result.has_next_state) == ([], False)
    assert baselined.reads == 1 and result.state_token is not None
    baselined.reads = 0
    baselined.observe()
    assert baselined.reads == 0


def test_the_token_names_paths_and_stat_keys_in_order(tmp_path: Path) -> None:
    write(tmp_path / "a.txt", "a", old=True)
    write(tmp_path / "b.txt", "b", old=True)
    files = matched_files(compile_patterns(["*.txt"], str(tmp_path)), [])
    token = tree_token(files)
    assert token.startswith("ff2:2:")
    assert tree_token(dict(reversed(list(files.items())))) != token
    assert tree_token({path: os.stat(tmp_path / "a.txt") for path in files}) != token
    assert tree_token({}) != token
    assert tree_token(files) == token
