"""A full disk: the daemon keeps running, says so, loses nothing, and resumes.

A real daemon process over a real SQLite file; the disk "fills" when the test lowers
the daemon's file size limit to nothing (RLIMIT_FSIZE: every write that would add a
byte to a file fails, as on a full disk), and "frees" when it lifts the limit again.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.daemon.client import call, ping
from agentmonitors.paths import resolve_socket_path, workspace_log_path
from tests.conftest import CliResult
from tests.transports.clocked_project import Project, clocked_project  # noqa: F401
from tests.waiting import wait_for

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prlimit is Linux's"),
]


def status(project: Project) -> dict[str, Any]:
    code, out, err = project.hook(["daemon", "status", "--format", "json"], {})
    assert code == 0, err
    report = json.loads(out)
    assert isinstance(report, dict)
    return report


def database_check(project: Project) -> dict[str, Any]:
    _code, out, _err = project.hook(["doctor", "--format", "json"], {})
    (check,) = [item for item in json.loads(out)["checks"] if item["name"] == "database"]
    assert isinstance(check, dict)
    return check


def test_a_full_disk_is_reported_loses_nothing_and_writing_resumes_when_space_returns(
    clocked_project: Project,  # noqa: F811
) -> None:
    project = clocked_project
    daemon = project.daemon
    assert daemon.process is not None
    pid = daemon.process.pid
    project.start_session("host-1")
    first = project.settled_change("one\n")

    hard = resource.prlimit(pid, resource.RLIMIT_FSIZE)[1]
    resource.prlimit(pid, resource.RLIMIT_FSIZE, (0, hard))
    try:
        # A change while the disk is full: observing it cannot be stored.
        (project.root / "notes" / "a.txt").write_text("two\n")
        daemon.advance(31)
        daemon.tick()
        assert ping(daemon.socket)
        assert project.states_any() == [first]  # what was stored is still there
        full = status(project)["database"]["diskFull"]
        assert isinstance(full, dict) and full["since"]
        code, text, err = project.hook(["daemon", "status"], {})
        assert code == 0, err
        assert "Database: disk full since " in text
        check = database_check(project)
        assert check["status"] == "fail" and check["detail"].startswith("disk full since ")
        # A prompt meanwhile is never broken by it.
        code, _out, err = project.hook(
            ["hook", "deliver"], project.payload("UserPromptSubmit", "host-1", prompt="hi")
        )
        assert code == 0, err
    finally:
        resource.prlimit(pid, resource.RLIMIT_FSIZE, (hard, hard))

    # Space is back: the change made while it was full is found and stored.
    new: list[str] = []
    for _ in range(40):
        daemon.advance(61)
        daemon.tick()
        new = [event for event in project.states_any() if event != first]
        if new:
            break
    assert len(new) == 1
    assert status(project)["database"]["diskFull"] is None
    assert database_check(project)["status"] == "pass"
    daemon.advance(16)
    daemon.tick()
    out, _err = project.prompt("host-1", "next")
    assert "Read the changed note." in out
    log = daemon.stop()
    assert "disk full" in log and "is written again" in log


MONITOR = """---
watch:
  type: file-fingerprint
  globs: "notes/*.txt"
---
Read the changed note.
"""


def test_a_detached_daemon_outlives_a_full_disk_under_its_log_and_says_what_it_lost(
    isolated_environment: Path, run_cli: Callable[..., CliResult]
) -> None:
    root = isolated_environment
    ws = str(root)
    assert run_cli("init", "--enable-only").code == 0
    folder = root / ".claude" / "monitors" / "notes"
    folder.mkdir(parents=True)
    (folder / "MONITOR.md").write_text(MONITOR)
    (root / "notes").mkdir()
    (root / "notes" / "a.txt").write_text("first\n")
    socket = resolve_socket_path(ws)
    started = run_cli("daemon", "start", "--poll-ms", "200", "--reap-after-ms", "0")
    assert started.code == 0, started.err
    try:
        wait_for(lambda: call(socket, "history.list", {}))
        pid = int(call(socket, "status", {})["pid"])
        hard = resource.prlimit(pid, resource.RLIMIT_FSIZE)[1]
        resource.prlimit(pid, resource.RLIMIT_FSIZE, (0, hard))
        try:
            # The change cannot be stored, and the warning cannot be logged: the log is
            # a file on the same full disk.
            (root / "notes" / "a.txt").write_text("two\n")
            wait_for(lambda: call(socket, "status", {})["database"]["diskFull"])
            assert ping(socket)
        finally:
            resource.prlimit(pid, resource.RLIMIT_FSIZE, (hard, hard))
        payload = {"session_id": "host-1", "hook_event_name": "SessionStart", "cwd": ws}
        opened = subprocess.run(
            [sys.executable, "-m", "agentmonitors", "session", "start"],
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            cwd=root,
        )
        assert opened.returncode == 0, opened.stderr
        log = Path(workspace_log_path(ws))
        wait_for(lambda: "is written again" in log.read_text())
        assert "log write(s) lost: the disk was full" in log.read_text()
        assert call(socket, "status", {})["database"]["diskFull"] is None
    finally:
        run_cli("daemon", "stop")
