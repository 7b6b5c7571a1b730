"""A real daemon process on a real socket over a temporary workspace."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.cli.main import main
from agentmonitors.daemon.client import DaemonApplicationError, call, ping
from agentmonitors.paths import resolve_db_path, resolve_socket_path
from tests.conftest import CliResult
from tests.waiting import wait_for

pytestmark = pytest.mark.slow

MONITOR = """---
watch:
  type: file-fingerprint
  globs: "notes/*.txt"
---
Read the changed note.
"""


class Workspace:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.socket = resolve_socket_path(str(root))
        self.db = resolve_db_path(str(root))
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, *extra: str) -> subprocess.Popen[bytes]:
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "agentmonitors",
                "daemon",
                "run",
                "--workspace",
                str(self.root),
                "--poll-ms",
                "60000",
                "--reap-after-ms",
                "0",
                *extra,
            ],
            cwd=self.root,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        wait_for(lambda: ping(self.socket))
        return self.process

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)
        self.process.stdout.close()  # type: ignore[union-attr]
        self.process = None

    def stop(self) -> str:
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        out, _ = self.process.communicate(timeout=10)
        self.process = None
        return out.decode()

    def query(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        conn = sqlite3.connect(self.db)
        try:
            return conn.execute(sql, params).fetchall()
        finally:
            conn.close()


@pytest.fixture
def workspace(isolated_environment: Path, run_cli: Callable[..., CliResult]) -> Iterator[Workspace]:
    root = isolated_environment
    assert run_cli("init", "--enable-only").code == 0
    folder = root / ".claude" / "monitors" / "notes"
    folder.mkdir(parents=True)
    (folder / "MONITOR.md").write_text(MONITOR)
    (root / "notes").mkdir()
    (root / "notes" / "a.txt").write_text("first\n")
    ws = Workspace(root)
    yield ws
    if ws.process is not None:
        ws.process.kill()
        ws.process.communicate(timeout=10)


def events(ws: Workspace) -> list[tuple[Any, ...]]:
    return ws.query("SELECT title, object_key, summary FROM monitor_events ORDER BY id")


def test_change_reaches_the_database_once_even_across_a_sigkill(workspace: Workspace) -> None:
    note = workspace.root / "notes" / "a.txt"
    workspace.start()
    # The first tick records the baseline.
    wait_for(lambda: workspace.query("SELECT result FROM observation_history"))
    assert events(workspace) == []

    note.write_text("second\n")
    title = f"File changed: {note}"
    wait_for(lambda: events(workspace))
    time.sleep(0.5)  # anything extra would have arrived by now
    assert events(workspace) == [(title, str(note), title)]

    workspace.kill()
    note.write_text("third\n")
    workspace.start()
    wait_for(lambda: len(events(workspace)) == 2)
    time.sleep(0.5)
    assert events(workspace) == [(title, str(note), title)] * 2
    (diff,) = workspace.query("SELECT diff_text FROM monitor_events ORDER BY id DESC LIMIT 1")
    assert diff == ("- 1: second\n+ 1: third",)
    output = workspace.stop()
    assert "AgentMon daemon listening on" in output
    assert not os.path.exists(workspace.socket)


def test_second_daemon_on_the_same_socket_fails_clearly(
    workspace: Workspace, run_cli: Callable[..., CliResult]
) -> None:
    workspace.start()
    second = subprocess.run(
        [
            sys.executable,
            "-m",
            "agentmonitors",
            "daemon",
            "run",
            "--workspace",
            str(workspace.root),
        ],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert second.returncode == 1
    assert f"AgentMon daemon is already running at {workspace.socket}." in second.stderr
    assert ping(workspace.socket)


def test_status_stop_and_history_over_the_socket(
    workspace: Workspace, run_cli: Callable[..., CliResult]
) -> None:
    workspace.start()
    wait_for(lambda: workspace.query("SELECT result FROM observation_history"))
    status = run_cli("daemon", "status", "--format", "json", "--workspace", str(workspace.root))
    assert status.code == 0
    report = status.json()
    assert report["running"] is True
    assert report["pid"] == workspace.process.pid  # type: ignore[union-attr]
    assert report["socketPath"] == workspace.socket
    assert report["reapAfterMs"] == 0
    history = run_cli("monitor", "history", "notes", "--format", "json")
    assert history.code == 0
    assert [row["monitorId"] for row in history.json()] == ["notes"]
    explained = run_cli("monitor", "explain", "notes", "--format", "json")
    assert explained.code == 0
    report = explained.json()
    assert "notice" not in report  # answered by the live daemon
    assert report["monitorId"] == "notes"
    assert report["stages"][1]["id"] == "scheduling"
    stopped = run_cli("daemon", "stop", "--workspace", str(workspace.root))
    assert stopped.code == 0
    assert stopped.out.strip() == "AgentMon daemon stopping."
    assert workspace.process is not None
    assert workspace.process.wait(10) == 0
    workspace.process.stdout.close()  # type: ignore[union-attr]
    workspace.process = None
    offline = run_cli("daemon", "status", "--format", "json")
    assert offline.json()["running"] is False
    assert "pid" not in offline.json()


def test_malformed_requests_and_hangups_never_stop_the_daemon(workspace: Workspace) -> None:
    import socket as socketlib

    workspace.start()
    for payload in (b"not json\n", b'{"id":"1","method":"nope","params":{}}\n', b"\xff\xfe\n"):
        client = socketlib.socket(socketlib.AF_UNIX)
        client.connect(workspace.socket)
        client.sendall(payload)
        reply = json.loads(client.makefile("rb").readline())
        client.close()
        assert reply["code"] == "unsupported_request"
    # A client that sends half a request and hangs up.
    client = socketlib.socket(socketlib.AF_UNIX)
    client.connect(workspace.socket)
    client.sendall(b'{"id":"2","method":"sta')
    client.close()
    with pytest.raises(DaemonApplicationError, match="limit"):
        call(workspace.socket, "history.list", {"limit": "x"})
    assert ping(workspace.socket)


def test_idle_daemon_reaps_itself_after_the_boot_grace(workspace: Workspace) -> None:
    process = workspace.start("--reap-after-ms", "200")
    # No session was ever seen, so the 10 s boot grace applies before reaping.
    assert process.wait(30) == 0
    assert not os.path.exists(workspace.socket)
    assert process.stdout is not None
    assert "idle with no active session" in process.stdout.read().decode()
    process.stdout.close()
    workspace.process = None


def test_sigint_stops_cleanly(workspace: Workspace) -> None:
    process = workspace.start()
    process.send_signal(signal.SIGINT)
    out, _ = process.communicate(timeout=10)
    workspace.process = None
    assert process.returncode == 0
    assert "Traceback" not in out.decode()
    assert not os.path.exists(workspace.socket)
    # The lock died with the process: a new daemon starts at once.
    workspace.start()
    assert ping(workspace.socket)


def test_the_daemon_wakes_for_intervals_shorter_than_its_poll(workspace: Workspace) -> None:
    """--poll-ms 60000, a monitor every second: it runs every second, not every minute."""
    folder = workspace.root / ".claude" / "monitors" / "clock"
    folder.mkdir(parents=True)
    (folder / "MONITOR.md").write_text(
        f"---\nwatch:\n  type: command-poll\n  command: ['{sys.executable}', -c, 'print(1)']\n"
        "  interval: 1s\n---\nTick.\n"
    )
    # A project command runs once the user approved it, as they would.
    assert main(["monitor", "approve", "--yes", "clock", "--workspace", str(workspace.root)]) == 0
    workspace.start()
    rows = wait_for(
        lambda: (
            len(workspace.query("SELECT id FROM observation_history WHERE monitor_id = 'clock'"))
            >= 4
        ),
        timeout=15,
    )
    assert rows
    workspace.stop()


def test_a_large_daemon_log_is_rotated_at_start(tmp_path: Path) -> None:
    from agentmonitors.daemon.spawn import rotate_log

    log = tmp_path / "daemon.log"
    log.write_text("x" * 100)
    assert not rotate_log(str(log), max_bytes=100)
    log.write_text("x" * 101)
    assert rotate_log(str(log), max_bytes=100)
    assert not log.exists() and (tmp_path / "daemon.log.1").read_text() == "x" * 101
    assert not rotate_log(str(tmp_path / "missing.log"))
