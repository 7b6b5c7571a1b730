"""SessionStart tells the agent which monitors wait for the user's approval; --debug names them.

A real ``session start`` boots a real daemon from Claude Code's SessionStart payload.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agentmonitors.daemon.client import call, ping
from agentmonitors.workspace import read_local_state
from tests.conftest import CliResult
from tests.transports.test_hook_end_to_end import Project, deliver, hook, make_project

pytestmark = pytest.mark.slow

Run = Callable[..., CliResult]

POLLER = """---
watch:
  type: command-poll
  command: ["sh", "-c", "echo {marker} >> {marker}"]
  interval: 1s
---
React.
"""


@pytest.fixture
def project(isolated_environment: Path, run_cli: Run) -> Iterator[Project]:
    proj = make_project(isolated_environment, run_cli)
    yield proj
    socket = read_local_state(proj.ws).socket
    if socket and ping(socket):
        call(socket, "stop", {})


def add_poller(project: Project, monitor_id: str) -> Path:
    marker = project.root.parent / f"{monitor_id}.ran"
    folder = project.root / ".claude" / "monitors" / monitor_id
    folder.mkdir(parents=True)
    (folder / "MONITOR.md").write_text(POLLER.format(marker=marker))
    return marker


def start_context(project: Project, session: str = "host-1") -> str:
    code, out, err = hook(["session", "start"], project.payload("SessionStart", session))
    assert code == 0, err
    if not out:
        return ""
    body = json.loads(out)
    assert body["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    return str(body["hookSpecificOutput"]["additionalContext"])


def test_session_start_names_the_waiting_monitors_in_one_line(
    project: Project, run_cli: Run
) -> None:
    marker = add_poller(project, "poller")
    context = start_context(project)
    lines = [line for line in context.splitlines() if "approval" in line]
    assert len(lines) == 1
    line = lines[0]
    assert "1 project monitor waits for the user's approval" in line
    assert ": poller." in line
    assert "agentmonitors monitor approve <id>" in line
    assert "Do not run the approve command yourself." in line

    # The daemon that session start booted never ran the command.
    skipped = call(project.socket, "daemon.tick", {})["skippedMonitors"]
    assert {"monitorId": "poller", "reason": "blocked: awaiting-approval"} in skipped
    assert not marker.exists()

    code, _out, err = deliver(project.payload("UserPromptSubmit"), "--debug")
    assert code == 0
    assert "blocked: awaiting-approval (never run until the user approves): ['poller']" in err

    assert run_cli("monitor", "approve", "--yes", "poller").code == 0
    assert "poller" in call(project.socket, "daemon.tick", {})["evaluatedMonitors"]
    assert marker.exists()
    assert "approval" not in start_context(project, "host-2")


def test_no_line_when_nothing_waits(project: Project) -> None:
    assert "approval" not in start_context(project)
