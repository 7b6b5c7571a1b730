"""``agentmonitors init --host cursor``: .cursor/hooks.json, merged, idempotent, and the
installed commands run as Cursor would run them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from agentmonitors.daemon.client import call, ping
from agentmonitors.transports.hosts.cursor import LOOP_LIMIT
from agentmonitors.workspace import read_local_state
from tests.conftest import CliResult
from tests.transports.test_cursor_host import CONVERSATION, fixture

Run = Callable[..., CliResult]
# Every event name Cursor documents; one name outside this set voids Cursor's whole file.
CURSOR_EVENTS = {
    "sessionStart", "sessionEnd", "beforeSubmitPrompt", "preToolUse", "postToolUse",
    "postToolUseFailure", "beforeShellExecution", "afterShellExecution",
    "beforeMCPExecution", "afterMCPExecution", "beforeReadFile", "afterFileEdit",
    "afterAgentResponse", "afterAgentThought", "preCompact", "subagentStart",
    "subagentStop", "stop",
}  # fmt: skip


def hooks_file(root: Path) -> Path:
    return root / ".cursor" / "hooks.json"


def test_init_writes_only_known_events_and_twice_changes_nothing(
    isolated_environment: Path, run_cli: Run
) -> None:
    first = run_cli("init", "--enable-only", "--host", "cursor")
    assert first.code == 0, first.err
    assert "Installed hooks" in first.out and ".cursor/hooks.json (cursor)" in first.out
    written = hooks_file(isolated_environment).read_text()
    data = json.loads(written)
    assert data["version"] == 1
    assert set(data["hooks"]) == {"sessionStart", "stop", "sessionEnd"} <= CURSOR_EVENTS
    (stop,) = data["hooks"]["stop"]
    assert stop["loop_limit"] == LOOP_LIMIT
    assert "agentmonitors hook deliver --host cursor" in stop["command"]

    again = run_cli("init", "--enable-only", "--host", "cursor")
    assert again.code == 0
    assert again.out.startswith("AgentMon is already set up in this project — nothing to change.")
    assert "Hooks already installed" in again.out
    assert hooks_file(isolated_environment).read_text() == written


def test_init_merges_with_the_hooks_already_there(isolated_environment: Path, run_cli: Run) -> None:
    mine = {"command": "./audit.sh", "timeout": 5}
    theirs = {"version": 1, "hooks": {"afterFileEdit": [mine], "stop": [mine]}, "x": True}
    hooks_file(isolated_environment).parent.mkdir()
    hooks_file(isolated_environment).write_text(json.dumps(theirs))
    assert run_cli("init", "--enable-only", "--host", "cursor").code == 0
    data = json.loads(hooks_file(isolated_environment).read_text())
    assert data["x"] is True
    assert data["hooks"]["afterFileEdit"] == [mine]
    assert data["hooks"]["stop"][0] == mine
    assert len(data["hooks"]["stop"]) == 2
    assert len(data["hooks"]["sessionStart"]) == 1


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("{not json", "not valid JSON"),
        ("[]", "expected a JSON object at the top level"),
        ('{"version": 2, "hooks": {}}', "version is 2; only version 1 is known"),
        ('{"version": 1, "hooks": []}', "hooks must be a JSON object"),
        ('{"version": 1, "hooks": {"stop": {}}}', "hooks.stop must be a list"),
    ],
)
def test_a_file_that_cannot_be_merged_is_left_alone(
    isolated_environment: Path, run_cli: Run, content: str, problem: str
) -> None:
    hooks_file(isolated_environment).parent.mkdir()
    hooks_file(isolated_environment).write_text(content)
    result = run_cli("init", "--enable-only", "--host", "cursor")
    assert result.code == 1
    (line,) = result.err.splitlines()
    assert line.startswith(f"error: {hooks_file(isolated_environment)}: ")
    assert problem in line
    assert hooks_file(isolated_environment).read_text() == content


def test_host_goes_with_init_without_a_name(isolated_environment: Path, run_cli: Run) -> None:
    result = run_cli("init", "notes", "--host", "cursor")
    assert result.code == 2  # a usage error
    assert result.err.strip() == (
        "error: --enable-only and --host apply only to `init` without a name"
    )
    assert not hooks_file(isolated_environment).exists()


def test_claude_code_needs_no_hook_file(isolated_environment: Path, run_cli: Run) -> None:
    result = run_cli("init", "--enable-only")
    assert result.code == 0
    assert not hooks_file(isolated_environment).exists()
    assert "hooks" not in result.out.lower()


@pytest.mark.slow
def test_the_installed_commands_run_as_cursor_runs_them(
    isolated_environment: Path, run_cli: Run
) -> None:
    """Each command through ``sh -c``, as Cursor runs it, with the payload on stdin."""
    assert run_cli("init", "--enable-only", "--host", "cursor").code == 0
    hooks = json.loads(hooks_file(isolated_environment).read_text())["hooks"]
    root = str(isolated_environment)
    # The installed CLI on the PATH, as a user's install puts it.
    path = os.pathsep.join((str(Path(sys.executable).parent), os.environ.get("PATH", "")))

    def run(event: str) -> str:
        (entry,) = hooks[event]
        done = subprocess.run(
            ["sh", "-c", entry["command"]],
            input=json.dumps(fixture(event, root)),
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
            cwd=root,
            env={**os.environ, "PATH": path},
        )
        return done.stdout

    try:
        assert run("sessionStart") == "{}"
        socket = read_local_state(root).socket
        assert socket is not None
        (session,) = call(socket, "session.list", {})
        assert (session["hostSessionId"], session["adapter"]) == (CONVERSATION, "cursor")
        assert run("stop") == "{}"
        assert run("sessionEnd") == "{}"
        assert call(socket, "session.list", {})[0]["status"] == "dormant"
    finally:
        socket = read_local_state(root).socket
        if socket and ping(socket):
            call(socket, "stop", {})


def test_without_the_cli_on_the_path_each_command_prints_cursors_nothing(
    isolated_environment: Path, run_cli: Run
) -> None:
    assert run_cli("init", "--enable-only", "--host", "cursor").code == 0
    hooks = json.loads(hooks_file(isolated_environment).read_text())["hooks"]
    for event, (entry,) in hooks.items():
        done = subprocess.run(
            ["/bin/sh", "-c", entry["command"]],
            input="{}",
            capture_output=True,
            text=True,
            check=True,
            env={"PATH": str(isolated_environment)},  # no agentmonitors here
        )
        assert done.stdout == "{}", event
