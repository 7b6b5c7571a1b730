"""``events follow --host-session``: the plugin's follower, for the whole session.

Claude Code starts the plugin's ``monitors`` entry before SessionStart has registered the
session, never restarts it, and turns every stdout line into a model turn. A real
(clocked) daemon, real hook processes, and the follower as Claude Code starts it: in the
project folder with ``CLAUDE_CODE_SESSION_ID`` in its environment and no flag.
"""

from __future__ import annotations

import io
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from agentmonitors.delivery.heartbeats import read_records
from agentmonitors.transports.follow import already_followed_line
from agentmonitors.transports.follow_host import BOOT_ATTEMPTS, HostFollower
from agentmonitors.workspace import LocalState, read_local_state, write_local_state
from tests.transports.clocked_project import Project
from tests.waiting import wait_for

pytestmark = pytest.mark.slow

HOST = "0b6f5a3c-host-follow"


class Running:
    """A follower process with its stdout lines in a queue."""

    def __init__(self, project: Project, *args: str, env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "agentmonitors", "events", "follow", *args],
            cwd=project.root,
            env={**os.environ, **(env or {})},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def line(self, timeout: float = 15.0) -> str | None:
        return self.lines.get(timeout=timeout)

    def no_line(self, within: float) -> bool:
        try:
            self.lines.get(timeout=within)
        except queue.Empty:
            return True
        return False

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.reader.join(timeout=5)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture
def running() -> Iterator[list[Running]]:
    started: list[Running] = []
    yield started
    for process in started:
        process.stop()


def plugin_follower(project: Project, running: list[Running], host: str = HOST) -> Running:
    """Started as the plugin's monitors entry is: the host's id in the environment only."""
    process = Running(project, env={"CLAUDE_CODE_SESSION_ID": host})
    running.append(process)
    return process


def host_records(host: str = HOST) -> list[dict[str, Any]]:
    return [
        dict(record)
        for record in read_records()
        if record.get("transport") == "follow" and record.get("hostSessionId") == host
    ]


def test_it_waits_silently_for_the_session_then_delivers_one_line(
    clocked_project: Project, running: list[Running]
) -> None:
    project = clocked_project
    follower = plugin_follower(project, running)
    # Before SessionStart: nothing on stdout (a line would be a model turn), still running.
    assert follower.no_line(1.5)
    assert follower.process.poll() is None
    session_id = project.start_session(HOST)
    wait_for(host_records, timeout=15)
    [record] = host_records()
    assert record["sessionId"] == session_id
    event_id = project.settled_change()
    line = follower.line()
    assert line is not None and line.startswith("AgentMon: ") and event_id in line
    assert line.count("\n") == 1
    # Committed on write: the next prompt's hook shows nothing again.
    out, _err = project.prompt(HOST, "go on")
    assert event_id not in out
    assert follower.no_line(1.0)


def test_a_second_follower_of_the_session_says_so_in_one_line_and_stops(
    clocked_project: Project, running: list[Running]
) -> None:
    project = clocked_project
    plugin_follower(project, running)
    session_id = project.start_session(HOST)
    wait_for(host_records, timeout=15)
    # The agent's own Monitor command, started anyway.
    second = Running(project, "--session", session_id, "--socket", project.daemon.socket)
    running.append(second)
    assert second.line() == already_followed_line(session_id) + "\n"
    assert second.line() is None
    assert second.process.wait(timeout=15) == 0
    # The plugin's follower still delivers.
    event_id = project.settled_change()
    line = running[0].line()
    assert line is not None and event_id in line


def test_live_off_stops_it_quietly_and_the_hooks_deliver(
    clocked_project: Project, running: list[Running]
) -> None:
    project = clocked_project
    follower = plugin_follower(project, running)
    project.start_session(HOST)
    wait_for(host_records, timeout=15)
    write_local_state(project.ws, read_local_state(project.ws)._replace(live="off"))
    wait_for(lambda: not host_records(), timeout=15)
    event_id = project.settled_change()
    assert follower.no_line(2.0)
    assert follower.process.poll() is None  # paused, not ended: Claude Code never restarts it
    out, _err = project.prompt(HOST, "go on")
    assert event_id in out
    # Back on: it follows again.
    write_local_state(project.ws, read_local_state(project.ws)._replace(live="on"))
    wait_for(host_records, timeout=15)
    second = project.settled_change("again\n")
    line = follower.line()
    assert line is not None and second in line and event_id not in line


def test_it_outlives_a_daemon_restart_and_session_end_stops_it_quietly(
    clocked_project: Project, running: list[Running]
) -> None:
    project = clocked_project
    follower = plugin_follower(project, running)
    project.start_session(HOST)
    wait_for(host_records, timeout=15)
    # Held still while the daemon restarts: a follower that saw it away for a second
    # would boot a daemon of its own first on a loaded machine, and the test's clocked
    # daemon could not start. Its held wait still breaks with the old daemon.
    follower.process.send_signal(signal.SIGSTOP)
    try:
        project.daemon.stop()
        project.daemon.start()
    finally:
        follower.process.send_signal(signal.SIGCONT)
    event_id = project.settled_change()
    line = follower.line()
    assert line is not None and event_id in line
    code, _out, err = project.hook(["session", "end"], project.payload("SessionEnd", HOST))
    assert code == 0, err
    # Dormant: nothing is printed; Claude Code ends the process with the session.
    assert follower.no_line(2.0)
    wait_for(lambda: not host_records(), timeout=15)


def test_after_clear_it_follows_the_session_its_process_went_on_to(
    clocked_project: Project, running: list[Running], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``/clear``: SessionEnd for this session, then SessionStart for a new id in the same
    Claude Code process, which does not restart the plugin's follower: that follower goes
    on with the new session. (This test process stands in for Claude Code's.)"""
    project = clocked_project
    monkeypatch.setenv("CLAUDE_PID", str(os.getpid()))
    follower = plugin_follower(project, running)
    project.start_session(HOST)
    wait_for(host_records, timeout=15)
    ended = project.payload("SessionEnd", HOST, reason="clear")
    assert project.hook(["session", "end"], ended)[0] == 0
    cleared = "0b6f5a3c-after-clear"
    started = project.payload("SessionStart", cleared, source="clear")
    code, _out, err = project.hook(["session", "start"], started)
    assert code == 0, err
    wait_for(lambda: host_records(cleared), timeout=15)
    assert not host_records()
    event_id = project.settled_change()
    line = follower.line()
    assert line is not None and event_id in line, line
    assert project.session_id(cleared) in line and project.session_id(HOST) not in line
    assert follower.process.poll() is None


def test_a_daemon_that_cannot_be_started_again_ends_it_with_one_line(
    clocked_project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run in this process, with the one boot it tries failing as a spawn that never
    answers does; the daemon, its socket and its going away are real."""
    project = clocked_project
    monkeypatch.chdir(project.root)
    project.start_session(HOST)
    out = io.StringIO()
    runner = HostFollower(HOST, None, out=out)
    boots: list[str] = []

    def failing_boot(workspace: str, state: LocalState, socket: str) -> str:
        boots.append(socket)
        return "Daemon failed to start within 8s"

    monkeypatch.setattr(runner, "boot", failing_boot)
    outcome: list[int] = []
    thread = threading.Thread(target=lambda: outcome.append(runner.run()), daemon=True)
    thread.start()
    wait_for(host_records, timeout=15)
    assert out.getvalue() == ""
    project.daemon.stop()
    thread.join(timeout=60)
    assert outcome == [0] and len(boots) == BOOT_ATTEMPTS
    [line] = out.getvalue().splitlines()
    assert line.startswith(
        "AgentMon: live updates stopped for this session: the daemon stopped and could not "
        "be started again (Daemon failed to start within 8s)."
    )
    assert "still reach you through the hooks" in line
