"""The session whose ``session start`` boots the daemon sees what its first check finds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.security.hostile import add_monitor, agentmonitors
from tests.waiting import wait_for

pytestmark = pytest.mark.slow

BROKEN = """---
name: Broken build
watch:
  type: command-poll
  command: ["{program}"]
  interval: 1h
urgency: normal
---
Fix the build command.
"""


def hook(root: Path, command: list[str], payload: dict[str, Any]) -> tuple[int, str, str]:
    """A hook command as Claude Code runs it: the payload on stdin, in the project."""
    done = subprocess.run(
        [os.path.join(os.path.dirname(sys.executable), "agentmonitors"), *command],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=root,
        env={**os.environ, "PWD": str(root)},
    )
    return done.returncode, done.stdout, done.stderr


@pytest.fixture
def project(isolated_environment: Path) -> Iterator[Path]:
    root = isolated_environment
    assert agentmonitors(root, "init", "--enable-only").returncode == 0
    add_monitor(root, "broken", BROKEN.format(program=root / "no-such-program"))
    approved = agentmonitors(root, "monitor", "approve", "--yes", "broken")
    assert approved.returncode == 0, approved.stderr
    yield root
    agentmonitors(root, "daemon", "stop")


def session_events(root: Path, session: str) -> list[dict[str, Any]]:
    done = agentmonitors(root, "events", "list", "--session", session, "--all", "--format", "json")
    assert done.returncode == 0, done.stderr
    events: list[dict[str, Any]] = json.loads(done.stdout)
    return events


def test_a_failure_on_the_first_check_reaches_the_session_that_booted_the_daemon(
    project: Path,
) -> None:
    start = {"session_id": "host-boot", "hook_event_name": "SessionStart", "cwd": str(project)}
    code, started, err = hook(project, ["session", "start"], start)
    assert code == 0, err
    listed = json.loads(agentmonitors(project, "session", "list", "--format", "json").stdout)
    session = next(item["id"] for item in listed if item["hostSessionId"] == "host-boot")

    # The first check runs as the daemon starts; its event belongs to this session.
    wait_for(lambda: bool(session_events(project, session)), timeout=20)
    events = session_events(project, session)
    assert [event["monitorId"] for event in events] == ["broken"]
    assert "Command failing" in json.dumps(events), events

    prompt = {**start, "hook_event_name": "UserPromptSubmit", "prompt": "go on"}
    code, delivered, err = hook(project, ["hook", "deliver"], prompt)
    assert code == 0, err
    # Shown once: in the recap of the start itself when the check was quicker than it,
    # else at the first prompt.
    assert "Command failing" in started + delivered

    explained = agentmonitors(project, "monitor", "explain", "broken")
    assert "session_event_state" not in explained.stdout
    assert "Projection and delivery: No" not in explained.stdout
