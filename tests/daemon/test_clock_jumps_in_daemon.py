"""A running daemon whose wall clock jumps, or which is stopped for minutes, carries on.

The daemon runs in its own process on its real socket and database and ticks on its own;
its clock is the real one plus an offset the test rewrites (``clocked_daemon.py
--offset``), so setting the clock back or forward a day is one write, and a laptop's sleep
is SIGSTOP, the wall clock moved on by minutes, then SIGCONT.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agentmonitors.daemon.client import ping
from tests.conftest import CliResult
from tests.daemon.clocked import ClockedDaemon, ms
from tests.daemon.test_sources_in_daemon import add_monitor
from tests.waiting import wait_for

pytestmark = pytest.mark.slow

EXE = str(Path(sys.executable).parent / "agentmonitors")
DAY_S = 86_400
STANDUP = ("standup", "Five-minute check", "*/5 * * * *")


@pytest.fixture
def workspace(isolated_environment: Path, run_cli: Callable[..., CliResult]) -> Path:
    assert run_cli("init", "--enable-only").code == 0
    return isolated_environment


@pytest.fixture
def daemon(workspace: Path, tmp_path: Path) -> Iterator[ClockedDaemon]:
    process = ClockedDaemon(workspace, tmp_path / "clock", offset=True)
    yield process
    if process.process is not None:
        process.process.send_signal(signal.SIGCONT)
        process.process.kill()
        process.process.communicate(timeout=10)


def hook(root: Path, args: list[str], payload: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The installed command, as the host runs it: its own process, JSON on stdin."""
    return subprocess.run(
        [EXE, *args],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        cwd=root,
        timeout=60,
        check=False,
    )


def events(daemon: ClockedDaemon, monitor_id: str) -> list[tuple[str, str, str | None]]:
    return [event for event in daemon.new_events() if event[0] == monitor_id]


def runs(daemon: ClockedDaemon, monitor_id: str) -> int:
    return len(daemon.results(monitor_id))


def held(daemon: ClockedDaemon, monitor_id: str) -> bool:
    rows = daemon.query("SELECT notify_state FROM monitor_state WHERE monitor_id = ?", monitor_id)
    return bool(rows) and "pendingDebounce" in json.loads(rows[0][0])


def test_sleep_and_day_jumps_neither_hold_a_settle_nor_replay_a_schedule(
    workspace: Path, daemon: ClockedDaemon
) -> None:
    add_monitor(
        workspace,
        "standup",
        "watch:\n  type: schedule\n  cron: '*/5 * * * *'\n  label: Five-minute check\n",
    )
    status = workspace / "status.txt"
    status.write_text("green\n")
    add_monitor(
        workspace,
        "build",
        "watch:\n  type: command-poll\n  command: [cat, status.txt]\n  interval: 1s\n"
        "urgency: high\n",
    )
    daemon.set_time(ms("2026-12-01T10:22:00Z"))  # between two standups
    daemon.start()
    assert daemon.process is not None
    pid = daemon.process.pid

    start = {"session_id": "h1", "hook_event_name": "SessionStart", "cwd": str(workspace)}
    assert hook(workspace, ["session", "start"], start).returncode == 0

    # Asleep for twenty minutes (10:25 ... 10:40 pass unseen): one catch-up run on waking.
    # A prompt meanwhile is answered without the daemon, and breaks nothing.
    before = runs(daemon, "build")
    os.kill(pid, signal.SIGSTOP)
    daemon.advance(20 * 60)
    prompt = {**start, "hook_event_name": "UserPromptSubmit", "prompt": "go on"}
    assert hook(workspace, ["hook", "deliver"], prompt).returncode == 0
    os.kill(pid, signal.SIGCONT)
    assert wait_for(lambda: events(daemon, "standup")) == [STANDUP]
    for _ in range(3):
        daemon.tick()
    assert events(daemon, "standup") == []  # not one per missed fire
    assert ping(daemon.socket)
    assert runs(daemon, "build") > before  # the interval monitor runs on
    # The same daemon delivers the catch-up at the next prompt.
    delivered = hook(workspace, ["hook", "deliver"], prompt)
    assert "Monitored changes are pending" in delivered.stdout
    assert daemon.process.pid == pid and daemon.process.poll() is None

    # A high change starts settling; the clock is set back a day meanwhile: the change
    # is out at the next tick, not a day later.
    status.write_text("red\n")
    wait_for(lambda: held(daemon, "build"))
    daemon.advance(-DAY_S)
    found = wait_for(lambda: events(daemon, "build"))
    assert [title.split(":")[0] for _, title, _ in found] == ["Command output changed"]
    assert not held(daemon, "build")

    # Forward two days (a day past the last run): the skipped standups are one run.
    daemon.advance(2 * DAY_S)
    assert wait_for(lambda: events(daemon, "standup")) == [STANDUP]
    for _ in range(3):
        daemon.tick()
    assert events(daemon, "standup") == []
