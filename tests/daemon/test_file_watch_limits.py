"""Watcher limits in a real daemon: refused watches and a real inotify queue overflow.

The refusal comes from a watch limit the test sets (the kernel's ``ENOSPC`` at
``max_user_watches`` is machine-wide, not for a test to lower); the overflow is the
kernel's own: the daemon is stopped while more events than its queue holds are made.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.daemon.client import call, ping
from agentmonitors.paths import resolve_db_path, resolve_socket_path
from tests.conftest import CliResult
from tests.waiting import wait_for

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's"),
]

# The daemon's watch cap (sources/file_events_inotify.py), as a user sets it.
WATCH_LIMIT_ENV = "AGENTMONITORS_FILE_WATCH_LIMIT"

MONITOR = """---
watch:
  type: file-fingerprint
  globs: "notes/**/*.txt"
---
Read the changed note.
"""


def _max_queued_events() -> int | None:
    try:
        with open("/proc/sys/fs/inotify/max_queued_events", encoding="ascii") as handle:
            return int(handle.read())
    except (OSError, ValueError):
        return None


@pytest.fixture
def daemon(
    isolated_environment: Path, run_cli: Callable[..., CliResult]
) -> Iterator[tuple[Path, subprocess.Popen[bytes], Path]]:
    root = isolated_environment
    assert run_cli("init", "--enable-only").code == 0
    folder = root / ".claude" / "monitors" / "notes"
    folder.mkdir(parents=True)
    (folder / "MONITOR.md").write_text(MONITOR)
    (root / "notes" / "deep").mkdir(parents=True)
    (root / "notes" / "a.txt").write_text("first\n")
    log = root.parent / "daemon.out"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                *(sys.executable, "-m", "agentmonitors", "daemon", "run"),
                *("--workspace", str(root), "--poll-ms", "60000", "--reap-after-ms", "0"),
            ],
            cwd=root,
            stdout=out,
            stderr=subprocess.STDOUT,
            # One watch: notes/ is watched, notes/deep/ is refused.
            env={**os.environ, WATCH_LIMIT_ENV: "1"},
        )
    try:
        wait_for(lambda: ping(resolve_socket_path(str(root))))
        yield root, process, log
    finally:
        process.send_signal(signal.SIGCONT)
        process.terminate()
        process.wait(10)


def _rows(root: Path, sql: str) -> list[Any]:
    conn = sqlite3.connect(resolve_db_path(str(root)))
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def _events(root: Path) -> list[Any]:
    return _rows(root, "SELECT object_key FROM monitor_events ORDER BY id")


def _file_events(root: Path) -> dict[str, Any]:
    status = call(resolve_socket_path(str(root)), "status", {})
    assert isinstance(status, dict)
    state = status["fileEvents"]
    assert isinstance(state, dict)
    return state


def test_refused_watches_and_a_queue_overflow_are_rescanned_and_said_once(
    daemon: tuple[Path, subprocess.Popen[bytes], Path], run_cli: Callable[..., CliResult]
) -> None:
    root, process, log = daemon
    # The watcher starts after the daemon first listens (a loaded machine shows the gap).
    wait_for(lambda: _file_events(root).get("backend") is not None)
    state = _file_events(root)
    assert state["backend"] == "inotify"
    assert state["mode"] == "rescanning"
    assert state["unwatchedExamples"] == [str(root / "notes" / "deep")]

    status = run_cli("daemon", "status")
    assert status.code == 0
    assert (
        "File events: inotify, rescanning 1 folder(s) without a watch (such as"
        f" {root / 'notes' / 'deep'}): watches refused" in status.out
    ), status.out
    doctor = run_cli("doctor")
    assert "◇ file-events: inotify, rescanning 1 folder(s)" in doctor.out, doctor.out
    assert "fs.inotify.max_user_watches" in doctor.out

    # Wait for the baseline, then change a file in the unwatched folder: the rescan
    # finds it though no event can.
    wait_for(lambda: _rows(root, "SELECT 1 FROM observation_history"))
    deep = root / "notes" / "deep" / "b.txt"
    deep.write_text("new\n")
    wait_for(lambda: (str(deep),) in _events(root))

    # A real overflow: the stopped daemon reads nothing while twice the queue is made.
    queued = _max_queued_events()
    if queued is None:
        pytest.skip("no /proc/sys/fs/inotify/max_queued_events to size the overflow")
    process.send_signal(signal.SIGSTOP)
    for index in range(queued // 2 + 1000):  # a create and a close-write each
        os.close(os.open(root / "notes" / f"burst-{index}.tmp", os.O_CREAT | os.O_WRONLY))
    process.send_signal(signal.SIGCONT)
    state = wait_for(lambda: (state := _file_events(root))["overflows"] >= 1 and state)
    assert state["lastOverflowAt"]
    status = run_cli("daemon", "status")
    assert "the event queue overflowed" in status.out, status.out

    process.terminate()
    process.wait(10)
    said = log.read_text()
    assert said.count("are rescanned every") == 1, said
    assert said.count("the event queue overflowed") == 1, said
