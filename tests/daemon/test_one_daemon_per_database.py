"""One daemon per database, whatever socket it is given (issue 24)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agentmonitors.daemon.client import call, ping
from agentmonitors.daemon.db_lock import DatabaseInUse, DatabaseLock, holder_socket, lock_path
from agentmonitors.paths import resolve_db_path, resolve_socket_path
from tests.conftest import CliResult
from tests.waiting import wait_for

MONITOR = """---
watch:
  type: file-fingerprint
  globs: "notes/*.txt"
---
Read the changed note.
"""


def agentmonitors(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentmonitors", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def daemons_of(workspace: Path) -> list[int]:
    """Pids of the `daemon run` processes serving ``workspace``, from the process list."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                argv = handle.read().split(b"\0")
        except OSError:
            continue
        words = [word.decode(errors="replace") for word in argv]
        if "daemon" in words and "run" in words and str(workspace) in words:
            found.append(int(entry))
    return found


@pytest.fixture
def short_dir() -> Iterator[Path]:
    base = Path(tempfile.mkdtemp(dir="/tmp", prefix="am2-"))
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def project(isolated_environment: Path, run_cli: Callable[..., CliResult]) -> Iterator[Path]:
    root = isolated_environment
    assert run_cli("init", "--enable-only").code == 0
    folder = root / ".claude" / "monitors" / "notes"
    folder.mkdir(parents=True)
    (folder / "MONITOR.md").write_text(MONITOR)
    (root / "notes").mkdir()
    (root / "notes" / "a.txt").write_text("first\n")
    yield root
    for pid in daemons_of(root):
        os.kill(pid, 15)


@pytest.mark.slow
def test_a_second_daemon_on_the_same_database_refuses_whatever_its_socket(
    project: Path, short_dir: Path
) -> None:
    ws = str(project)
    first = resolve_socket_path(ws)
    started = agentmonitors(
        "daemon", "start", "--workspace", ws, "--poll-ms", "200", "--reap-after-ms", "0"
    )
    assert started.returncode == 0, started.stderr
    assert ping(first)
    other = str(short_dir / "second.sock")

    ran = agentmonitors(
        "daemon", "run", "--workspace", ws, "--socket", other, "--reap-after-ms", "0"
    )
    detached = agentmonitors(
        "daemon", "start", "--workspace", ws, "--socket", other, "--reap-after-ms", "0"
    )
    for second in (ran, detached):
        assert second.returncode != 0
        assert "already running" in second.stderr
        assert first in second.stderr
    assert not ping(other)
    assert len(daemons_of(project)) == 1

    # One change is one event, delivered once.
    hook = {"session_id": "host-1", "cwd": ws}
    opened = agentmonitors(
        "session", "start", stdin=json.dumps({**hook, "hook_event_name": "SessionStart"})
    )
    assert opened.returncode == 0, opened.stderr
    wait_for(lambda: call(first, "history.list", {}))
    (project / "notes" / "a.txt").write_text("second\n")
    db = resolve_db_path(ws)

    def events() -> list[tuple[str]]:
        conn = sqlite3.connect(db)
        try:
            return conn.execute("SELECT id FROM monitor_events").fetchall()
        finally:
            conn.close()

    wait_for(events)
    time.sleep(2)  # ten ticks of a twin daemon, had one started
    assert len(events()) == 1
    session = call(first, "session.list", {})[0]["id"]
    listed = agentmonitors("events", "list", "--session", session, "--format", "json")
    assert listed.returncode == 0, listed.stderr
    assert len(json.loads(listed.stdout)) == 1
    assert len(daemons_of(project)) == 1


def test_the_lock_follows_the_real_path_and_names_the_holder(tmp_path: Path) -> None:
    db = tmp_path / "inbox.db"
    db.touch()
    alias = tmp_path / "alias.db"
    alias.symlink_to(db)
    held = DatabaseLock(str(db), "/run/first.sock")
    held.acquire()
    try:
        assert lock_path(str(alias)) == lock_path(str(db))
        with pytest.raises(DatabaseInUse) as refused:
            DatabaseLock(str(alias), "/run/second.sock").acquire()
        message = str(refused.value)
        assert message.startswith("AgentMon daemon is already running at /run/first.sock")
        assert holder_socket(str(alias)) is None  # this process holds it: no other daemon
    finally:
        held.release()
    again = DatabaseLock(str(alias), "/run/second.sock")
    again.acquire()
    again.release()
    lock = lock_path(str(db))
    assert lock is not None
    assert lock.startswith(os.path.join(os.environ["XDG_DATA_HOME"], "agentmonitors", "locks"))
    assert not os.path.exists(lock + ".holder")


def test_memory_databases_take_no_lock() -> None:
    assert lock_path(":memory:") is None
    first = DatabaseLock(":memory:", "/run/a.sock")
    first.acquire()
    DatabaseLock(":memory:", "/run/b.sock").acquire()
    first.release()
