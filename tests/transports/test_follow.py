"""``events follow``: one stdout line per delivery, through the shared handoff.

A real (clocked) daemon, a real ``events follow`` subprocess whose stdout is read line
by line, real hook processes with Claude Code's payloads.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from agentmonitors.daemon.channels import channel_attached
from agentmonitors.delivery.heartbeats import read_records
from agentmonitors.delivery.text import _socket_clause
from agentmonitors.workspace import read_local_state, write_local_state
from tests.transports.clocked_project import Project
from tests.waiting import wait_for

pytestmark = pytest.mark.slow

HOST = "host-follow"


class Follow:
    """A running ``events follow`` with its stdout lines in a queue."""

    def __init__(
        self, project: Project, session_id: str, *extra: str, reading: bool = True
    ) -> None:
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "agentmonitors",
                "events",
                "follow",
                "--session",
                session_id,
                "--socket",
                project.daemon.socket,
                *extra,
            ],
            cwd=project.root,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        # A test that closes stdout itself reads nothing: a reader blocked in read()
        # would hold the pipe open (and block the close).
        self.reader = threading.Thread(target=self._read, daemon=True)
        if reading:
            self.reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        try:
            for line in self.process.stdout:
                self.lines.put(line)
        except ValueError:  # the test closed stdout itself
            pass
        self.lines.put(None)

    def line(self, timeout: float = 15.0) -> str | None:
        return self.lines.get(timeout=timeout)

    def no_line(self, within: float) -> bool:
        try:
            self.lines.get(timeout=within)
        except queue.Empty:
            return True
        return False

    def wait(self, timeout: float = 15.0) -> tuple[int, str]:
        code = self.process.wait(timeout=timeout)
        assert self.process.stderr is not None
        return code, self.process.stderr.read()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        if self.reader.is_alive():
            self.reader.join(timeout=5)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture
def follows() -> Iterator[list[Follow]]:
    started: list[Follow] = []
    yield started
    for follow in started:
        follow.stop()


def start(
    project: Project, follows: list[Follow], *extra: str, reading: bool = True
) -> tuple[str, Follow]:
    session_id = project.start_session(HOST)
    follow = Follow(project, session_id, *extra, reading=reading)
    follows.append(follow)
    # Running: its heartbeat is written once the daemon answered the first poll.
    wait_for(lambda: follow_records(session_id))
    return session_id, follow


def follow_records(session_id: str) -> list[dict[str, Any]]:
    return [
        dict(record)
        for record in read_records()
        if record.get("transport") == "follow" and record.get("sessionId") == session_id
    ]


def settle_two(project: Project) -> list[str]:
    """Change two notes at once; move the clock until both events are stored and settled."""
    before = set(project.states_any())
    for name in ("a.txt", "b.txt"):
        scratch = project.root / "notes" / f".{name}.partial"
        scratch.write_text(f"{name} changed\n")
        os.replace(scratch, project.root / "notes" / name)
    new: list[str] = []
    for _ in range(6):
        project.daemon.advance(31)
        project.daemon.tick()
        new = [event for event in project.states_any() if event not in before]
        if len(new) == 2:
            break
    assert len(new) == 2, new
    project.daemon.advance(16)
    project.daemon.tick()
    return new


def test_a_settled_change_becomes_exactly_one_line_the_hooks_then_leave_alone(
    clocked_project: Project, follows: list[Follow]
) -> None:
    project = clocked_project
    session_id, follow = start(project, follows)
    event_id = project.settled_change()

    line = follow.line()
    assert line is not None and line.endswith("\n") and line.count("\n") == 1
    assert line.startswith("AgentMon: [high] notes:")
    assert (
        f"agentmonitors events ack --session {session_id}{_socket_clause(project.daemon.socket)}"
        f" --event-ids {event_id}." in line
    )
    assert f"agentmonitors events list --session {session_id}" in line and "--unread" in line
    assert len(line.rstrip("\n")) <= 600, line
    # Committed: the hook's next prompt does not surface it again.
    wait_for(lambda: project.states(HOST) == {event_id: "claimed"})
    out, _err = project.prompt(HOST, "anything new?")
    assert event_id not in out
    assert follow.no_line(within=1.0)  # one delivery, one line


def test_a_line_names_a_change_without_showing_it_so_the_session_diff_still_shows_it(
    clocked_project: Project, follows: list[Follow]
) -> None:
    project = clocked_project
    session_id, follow = start(project, follows)
    project.settled_change("second\n")
    assert follow.line() is not None
    key = str(project.root / "notes" / "a.txt")
    done = subprocess.run(
        [
            *(sys.executable, "-m", "agentmonitors", "diff", "notes", "--object", key),
            *("--session", session_id, "--socket", project.daemon.socket, "--format", "json"),
        ],
        cwd=project.root,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    diff = json.loads(done.stdout)
    assert diff["changed"] is True, diff
    assert "- 1: first" in diff["diff"] and "+ 1: second" in diff["diff"], diff


def test_two_events_settling_together_make_one_line(
    clocked_project: Project, follows: list[Follow]
) -> None:
    project = clocked_project
    count = len(project.states_any())
    (project.root / "notes" / "b.txt").write_text("second\n")
    for _ in range(6):  # the new note's own event, before the session begins
        project.daemon.advance(31)
        project.daemon.tick()
        if len(project.states_any()) > count:
            break
    _session_id, follow = start(project, follows)
    events = settle_two(project)

    line = follow.line()
    assert line is not None and line.count("\n") == 1
    assert line.startswith("AgentMon: [high] notes: 2 changes, latest: File changed: ")
    ids = line.split(" --event-ids ")[1].split(".")[0]
    assert sorted(ids.split(",")) == sorted(events)
    assert follow.no_line(within=1.0)


def test_json_format_prints_one_object_per_delivery(
    clocked_project: Project, follows: list[Follow]
) -> None:
    project = clocked_project
    _session_id, follow = start(project, follows, "--format", "json")
    event_id = project.settled_change()

    line = follow.line()
    assert line is not None
    record = json.loads(line)
    assert record["type"] == "delivery" and record["eventIds"] == [event_id]
    assert record["events"][0]["monitorId"] == "notes" and record["events"][0]["urgency"] == "high"
    assert record["line"].startswith("AgentMon: ")


def test_max_seconds_ends_with_the_restart_line(
    clocked_project: Project, follows: list[Follow]
) -> None:
    session_id, follow = start(clocked_project, follows, "--max-seconds", "2")
    line = follow.line()
    assert line is not None
    assert "Start the Monitor again" in line
    assert f"agentmonitors events follow --session {session_id}" in line
    code, err = follow.wait()
    assert code == 0, err
    assert follow.line() is None  # nothing after the restart line
    assert follow_records(session_id) == []


def test_session_end_stops_it_quietly(clocked_project: Project, follows: list[Follow]) -> None:
    project = clocked_project
    session_id, follow = start(project, follows)
    code, _out, err = project.hook(["session", "end"], project.payload("SessionEnd", HOST))
    assert code == 0, err
    code, err = follow.wait()
    assert code == 0 and "session ended" in err
    assert follow.line() is None
    assert follow_records(session_id) == []


def test_disabling_the_project_stops_it(clocked_project: Project, follows: list[Follow]) -> None:
    project = clocked_project
    _session_id, follow = start(project, follows)
    write_local_state(project.ws, read_local_state(project.ws)._replace(enabled=False))
    code, err = follow.wait()
    assert code == 0 and "disabled" in err
    assert follow.line() is None


def test_sigterm_stops_it_and_later_changes_stay_the_hooks(
    clocked_project: Project, follows: list[Follow]
) -> None:
    project = clocked_project
    session_id, follow = start(project, follows)
    follow.process.send_signal(signal.SIGTERM)
    code, _err = follow.wait()
    assert code == 0
    assert follow.line() is None
    assert follow_records(session_id) == []

    event_id = project.settled_change()
    out, _err = project.prompt(HOST, "go on")
    assert event_id in out
    assert project.states(HOST) == {event_id: "claimed"}


def test_a_closed_stdout_stops_it_and_the_hook_gets_the_event(
    clocked_project: Project, follows: list[Follow]
) -> None:
    project = clocked_project
    _session_id, follow = start(project, follows, reading=False)
    assert follow.process.stdout is not None
    follow.process.stdout.close()
    code, err = follow.wait()
    assert code == 0 and "stdout closed" in err

    event_id = project.settled_change()
    out, _err = project.prompt(HOST, "go on")
    assert event_id in out


def test_it_survives_a_daemon_restart(clocked_project: Project, follows: list[Follow]) -> None:
    project = clocked_project
    _session_id, follow = start(project, follows)
    project.daemon.stop()
    time.sleep(0.6)  # at least one failed poll while the daemon is down
    project.daemon.start()
    event_id = project.settled_change()
    line = follow.line()
    assert line is not None and event_id in line
    assert follow.process.poll() is None


def test_its_heartbeat_keeps_the_daemon_attached(
    clocked_project: Project, follows: list[Follow]
) -> None:
    project = clocked_project
    session_id, _follow = start(project, follows)
    [record] = follow_records(session_id)
    assert record["workspacePath"] == project.ws
    now_ms = int(time.time() * 1000)
    assert channel_attached(project.daemon.socket, project.ws, now_ms)


def test_an_unknown_session_is_an_error(clocked_project: Project) -> None:
    project = clocked_project
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "agentmonitors",
            "events",
            "follow",
            "--session",
            "no-such-session",
            "--socket",
            project.daemon.socket,
        ],
        cwd=project.root,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 1 and done.stdout == ""
    assert "no-such-session" in done.stderr
