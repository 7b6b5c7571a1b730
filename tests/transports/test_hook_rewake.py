"""``hook rewake``: the asyncRewake Stop hook, through real processes and a real daemon.

Claude Code runs it in the background at each Stop; an exit 2 makes its stderr the
session's next turn (docs/architecture.md, "Host adapters"). The host process is stood in
for by a process whose command line is the one Claude Code's would be (``CLAUDE_PID``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.daemon.client import call, ping
from agentmonitors.transports.rewake import FRAME, SLOT_FILE, can_wake, follower_running
from agentmonitors.transports.turn_watch import TurnWatch
from agentmonitors.workspace import read_local_state, write_local_state
from tests.conftest import CliResult
from tests.test_imports import run_hook_command
from tests.transports.test_hook_end_to_end import Project, make_project
from tests.waiting import asleep_for_a_window, wait_for

pytestmark = pytest.mark.slow

Run = Callable[..., CliResult]

STREAM_JSON = ["-p", "--input-format", "stream-json", "--output-format", "stream-json"]
PLUGIN_MONITOR = {
    "id": "b1",
    "type": "monitor",
    "status": "running",
    "description": "AgentMon live updates",
    "command": "agentmonitors events follow --host-session-id abc",
}


@pytest.fixture
def project(isolated_environment: Path, run_cli: Run) -> Iterator[Project]:
    proj = make_project(isolated_environment, run_cli)
    yield proj
    socket = read_local_state(proj.ws).socket
    if socket and ping(socket):
        call(socket, "stop", {})


class Host:
    """A stand-in for the Claude Code process: its command line is all the hook reads."""

    def __init__(self, *args: str) -> None:
        # Python leaves the arguments after -c to the script, which ignores them.
        # Its input is a pipe the test holds open, as an SDK holds a session's.
        self.process = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(300)", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    @property
    def pid(self) -> str:
        return str(self.process.pid)

    def end_input(self) -> None:
        """Close the host's input, as an SDK does when its session is done."""
        assert self.process.stdin is not None
        self.process.stdin.close()

    def end(self) -> None:
        self.process.kill()
        self.process.wait()
        if self.process.stdin is not None:
            self.process.stdin.close()


@pytest.fixture
def host() -> Iterator[Host]:
    process = Host(*STREAM_JSON)
    yield process
    process.end()


# What Claude Code 2.1.332 writes to a transcript (one object a line), trimmed.
ANSWER = {"type": "assistant", "message": {"content": [{"type": "text", "text": "ok"}]}}
TOOL_CALL = {"type": "assistant", "message": {"content": [{"type": "tool_use", "id": "t1"}]}}
IDLE_TAIL = [
    {"type": "user", "message": {"content": "hello"}},
    {"type": "api-request"},
    ANSWER,
    {"type": "last-prompt"},
    {"type": "attachment", "attachment": {"type": "prompt_snapshot"}},
    {"type": "attachment", "attachment": {"type": "hook_success"}},
    {"type": "system", "subtype": "stop_hook_summary"},
]
NEW_PROMPT = [{"type": "queue-operation"}, {"type": "user", "message": {"content": "next"}}]
CONTINUED = [
    {"type": "attachment", "attachment": {"type": "hook_additional_context"}},
    {"type": "api-request"},
]


def write_transcript(path: Path, entries: list[dict[str, Any]]) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.writelines(json.dumps(entry) + "\n" for entry in entries)


def start_rewake(project: Project, host_pid: str, **extra: Any) -> subprocess.Popen[bytes]:
    fields: dict[str, Any] = {"stop_hook_active": False, "background_tasks": [], **extra}
    payload = project.payload("Stop", **fields)
    process = subprocess.Popen(
        [sys.executable, "-m", "agentmonitors", "hook", "rewake"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "CLAUDE_PID": host_pid},
    )
    assert process.stdin is not None
    process.stdin.write(json.dumps(payload).encode())
    process.stdin.close()
    process.stdin = None  # written and closed, as the host does: communicate() only reads
    return process


def finish(process: subprocess.Popen[bytes], timeout: float = 30) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=timeout)
    return process.returncode, out.decode(), err.decode()


def slot(project: Project) -> Path:
    return project.root / ".agentmonitors" / "sessions" / "host-1" / SLOT_FILE


def waiting(project: Project, process: subprocess.Popen[bytes]) -> bool:
    path = slot(project)
    return path.exists() and path.read_text() == str(process.pid) and process.poll() is None


def states(project: Project) -> dict[str, str]:
    return {event["id"]: event["deliveryState"] for event in project.events()}


def test_an_idle_stream_json_session_is_woken_by_its_next_delivery(
    project: Project, host: Host
) -> None:
    """The hook waits; a change makes it exit 2 with the delivery on stderr, committed;
    the next Stop waits again and wakes only for the next change."""
    project.start_session()
    waiter = start_rewake(project, host.pid)
    wait_for(lambda: waiting(project, waiter), timeout=20)
    time.sleep(1.0)
    assert waiter.poll() is None, "nothing to deliver: the hook must keep waiting"

    project.change()
    code, out, err = finish(waiter)
    assert (code, out) == (2, ""), err
    assert err.startswith(FRAME), err
    assert f"--session {project.session_id()}" in err
    (event,) = project.events()
    assert states(project) == {event["id"]: "claimed"}
    assert not slot(project).exists()

    # The woken turn's Stop arms the next wait; the delivered event does not wake it.
    # (Acknowledged, as the agent does once it handled it: a normal change's reminder
    # comes again only then.)
    call(
        project.socket, "events.ack", {"sessionId": project.session_id(), "eventIds": [event["id"]]}
    )
    second = start_rewake(project, host.pid)
    wait_for(lambda: waiting(project, second), timeout=20)
    time.sleep(1.0)
    assert second.poll() is None
    project.change(text="changed again\n")
    code, out, err = finish(second)
    assert (code, out) == (2, ""), err
    assert err.startswith(FRAME) and err.count(FRAME) == 1, err


def test_it_stays_out_when_a_follower_runs_or_the_host_cannot_be_woken(
    project: Project, host: Host
) -> None:
    """Exit 0 at once, nothing printed, nothing claimed: the plugin's monitor is running;
    a plain ``-p`` (its hook blocks the run); no host command line; ``live: off``."""
    project.start_session()
    project.change()
    plain = Host("-p", "hello", "--output-format", "json")
    try:
        cases = [
            (host.pid, {"background_tasks": [PLUGIN_MONITOR]}),
            (plain.pid, {}),
            ("", {}),
        ]
        for pid, extra in cases:
            started = time.monotonic()
            code, out, err = finish(start_rewake(project, pid, **extra))
            assert (code, out, err) == (0, "", ""), (pid, extra)
            assert time.monotonic() - started < 10
    finally:
        plain.end()
    state = read_local_state(project.ws)
    write_local_state(project.ws, state._replace(live="off"))
    assert finish(start_rewake(project, host.pid)) == (0, "", "")
    assert set(states(project).values()) == {"unread"}


def test_a_newer_stop_retires_the_waiting_hook_and_an_ended_host_ends_it(
    project: Project, host: Host
) -> None:
    """One waiter per session: the next Stop's hook (here one that stays out for the
    plugin's monitor) makes the older one exit 0 silently; so does the host's exit."""
    project.start_session()
    older = start_rewake(project, host.pid)
    wait_for(lambda: waiting(project, older), timeout=20)
    newer = start_rewake(project, host.pid, background_tasks=[PLUGIN_MONITOR])
    assert finish(newer) == (0, "", "")
    assert finish(older, timeout=10) == (0, "", "")

    again = start_rewake(project, host.pid)
    wait_for(lambda: waiting(project, again), timeout=20)
    host.end()
    assert finish(again, timeout=10) == (0, "", "")


def test_a_waiter_ends_when_the_hosts_input_ends(project: Project, host: Host) -> None:
    """A headless host whose input ended waits for its background hooks before it exits:
    the waiter ends then, or it would hold the host up for the hook's whole timeout."""
    project.start_session()
    waiter = start_rewake(project, host.pid)
    wait_for(lambda: waiting(project, waiter), timeout=20)
    host.end_input()
    assert finish(waiter, timeout=10) == (0, "", "")
    assert host.process.poll() is None  # the host itself is still there


@pytest.mark.parametrize(
    ("argv", "wakes"),
    [
        (["claude", "-p", "--input-format", "stream-json"], True),
        (["claude", "--print", "--input-format=stream-json", "--verbose"], True),
        (["claude"], True),  # interactive: an exit 2 wakes it too
        (["claude", "-p", "hi", "--output-format", "stream-json"], False),
        (["claude", "-p", "--input-format", "text"], False),
        (["claude", "-p", "--input-format"], False),
        (None, False),
    ],
)
def test_which_hosts_can_be_woken(argv: list[str] | None, wakes: bool) -> None:
    assert can_wake(argv) is wakes


@pytest.mark.parametrize(
    ("tasks", "running"),
    [
        ([PLUGIN_MONITOR], True),
        (
            [{**PLUGIN_MONITOR, "description": "live", "command": "agentmonitors events follow"}],
            True,
        ),
        ([{**PLUGIN_MONITOR, "command": "x", "description": "AGENTMONITORS live"}], True),
        ([{**PLUGIN_MONITOR, "status": "completed"}], False),
        ([{**PLUGIN_MONITOR, "command": "tail -f log", "description": "logs"}], False),
        ([], False),
        (None, False),
        ("agentmonitors events follow", False),
    ],
)
def test_which_background_tasks_are_a_follower(tasks: object, running: bool) -> None:
    assert follower_running(tasks) is running


@pytest.mark.parametrize(
    ("tail", "running"),
    [
        (IDLE_TAIL, False),
        (IDLE_TAIL + NEW_PROMPT, True),
        (IDLE_TAIL + CONTINUED, True),
        ([*IDLE_TAIL[:2], TOOL_CALL], True),
        ([], False),
    ],
)
def test_where_the_transcript_says_the_session_stands(
    tail: list[dict[str, Any]], running: bool, tmp_path: Path
) -> None:
    transcript = tmp_path / "session.jsonl"
    write_transcript(transcript, [{"type": "summary", "text": "x" * 300_000}, *tail])
    assert TurnWatch(str(transcript)).turn_started() is running
    idle = tmp_path / "idle.jsonl"
    write_transcript(idle, IDLE_TAIL)
    watch = TurnWatch(str(idle))
    assert not watch.turn_started()
    write_transcript(idle, tail[-1:] if running else [{"type": "system"}])
    assert watch.turn_started() is running


def test_the_wait_ends_when_a_turn_starts_and_leaves_the_change_to_its_hooks(
    project: Project, host: Host
) -> None:
    """A waiter whose session starts a turn (a prompt arrives) exits 0 silently; one that
    starts while a tool call runs stays out at once, with a change pending."""
    project.start_session()
    transcript = project.root / "transcript.jsonl"
    write_transcript(transcript, IDLE_TAIL)
    waiter = start_rewake(project, host.pid, transcript_path=str(transcript))
    wait_for(lambda: waiting(project, waiter), timeout=20)
    write_transcript(transcript, NEW_PROMPT)
    assert finish(waiter, timeout=10) == (0, "", "")

    write_transcript(transcript, [TOOL_CALL])
    project.change()
    busy = start_rewake(project, host.pid, transcript_path=str(transcript))
    assert finish(busy, timeout=10) == (0, "", "")
    assert set(states(project).values()) == {"unread"}


def test_a_stop_that_stays_out_loads_nothing_heavy(project: Project) -> None:
    """Every Stop runs the hook: staying out costs no click, pydantic, sqlite3, asyncio,
    typing, nor the daemon client."""
    project.start_session()
    payload = project.payload("Stop", background_tasks=[PLUGIN_MONITOR])
    ran = run_hook_command(["hook", "rewake"], payload, project.root)
    assert (ran.code, ran.out, ran.err, ran.heavy) == (0, "", "", set())
    assert "agentmonitors.daemon.client" not in ran.modules


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="reads /proc")
def test_a_waiting_hook_sleeps_until_the_daemon_has_news(project: Project, host: Host) -> None:
    """While nothing changes the waiter is asleep on the daemon (it used to ask five
    times a second); a change still wakes the session."""
    project.start_session()
    waiter = start_rewake(project, host.pid)
    wait_for(lambda: waiting(project, waiter), timeout=20)
    time.sleep(0.3)
    assert asleep_for_a_window(waiter.pid) <= 2
    project.change()
    code, _out, err = finish(waiter)
    assert code == 2 and err.startswith(FRAME), err
