"""An idle daemon and an idle follower sleep until there is a reason to wake.

A real ``daemon run`` with an open session and reaping on, and a real ``events follow``
on it: with nothing changing, the daemon's event-loop thread and the whole follower
process stay asleep (their voluntary context switches, from /proc, barely move); a
change still reaches the follower's line, pushed by the daemon.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agentmonitors.daemon.client import call, ping
from agentmonitors.delivery.heartbeats import read_records
from agentmonitors.paths import resolve_socket_path
from tests.conftest import CliResult
from tests.waiting import asleep_for_a_window, wait_for

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="reads /proc"),
]

HOST = "host-idle"
MONITOR = """---
watch:
  type: file-fingerprint
  globs: "notes/*.txt"
---
Read the changed note.
"""


class Daemon:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.socket = resolve_socket_path(str(root))
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "agentmonitors",
                "daemon",
                "run",
                "--workspace",
                str(root),
                "--poll-ms",
                "3600000",
                "--reap-after-ms",
                "600000",
            ],
            cwd=root,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for(lambda: ping(self.socket))

    def hook(self, command: list[str], payload: dict[str, str]) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "agentmonitors", *command],
            input=json.dumps(payload).encode(),
            capture_output=True,
            cwd=self.root,
            timeout=60,
            check=True,
        )
        return done.stdout.decode()

    def start_session(self) -> str:
        self.hook(
            ["session", "start"],
            {"session_id": HOST, "hook_event_name": "SessionStart", "cwd": str(self.root)},
        )
        listed = call(self.socket, "session.list", {})
        return next(str(s["id"]) for s in listed if s["hostSessionId"] == HOST)


@pytest.fixture
def daemon(isolated_environment: Path, run_cli: Callable[..., CliResult]) -> Iterator[Daemon]:
    root = isolated_environment
    assert run_cli("init", "--enable-only").code == 0
    folder = root / ".claude" / "monitors" / "notes"
    folder.mkdir(parents=True)
    (folder / "MONITOR.md").write_text(MONITOR)
    (root / "notes").mkdir()
    (root / "notes" / "a.txt").write_text("first\n")
    running = Daemon(root)
    yield running
    running.process.terminate()
    running.process.wait(20)


def test_an_idle_daemon_with_a_session_and_reaping_on_sleeps_until_a_reason(
    daemon: Daemon,
) -> None:
    daemon.start_session()
    time.sleep(0.5)  # the session's hook-state refresh and its own first wakes
    # No tick is due for an hour, no session can go idle for ten minutes, no Codex
    # thread waits: nothing should wake the event loop (it used to, three times a
    # second: the reaper's beat and the Codex runner's poll).
    assert asleep_for_a_window(daemon.process.pid, main_thread_only=True) <= 1


def test_an_idle_follower_sleeps_and_a_change_still_reaches_its_line(daemon: Daemon) -> None:
    session_id = daemon.start_session()
    follow = subprocess.Popen(
        [sys.executable, "-m", "agentmonitors", "events", "follow", "--session", session_id],
        cwd=daemon.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        wait_for(
            lambda: any(
                record.get("transport") == "follow" and record.get("sessionId") == session_id
                for record in read_records()
            )
        )
        time.sleep(0.3)
        # It used to look at the database's files every 10 ms.
        assert asleep_for_a_window(follow.pid) <= 2
        # The daemon pushes: a change reaches the line.
        (daemon.root / "notes" / "a.txt").write_text("second\n")
        assert follow.stdout is not None
        line = follow.stdout.readline()
        assert "notes" in line, line
    finally:
        follow.terminate()
        assert follow.wait(10) == 0
        if follow.stdout is not None:
            follow.stdout.close()
