"""A repository's hostile MONITOR.md files fail alone: every command finishes promptly,
names each bad file, and the good monitor beside them keeps producing its events."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentmonitors.daemon.client import call, ping
from agentmonitors.workspace import read_local_state
from tests.waiting import wait_for

pytestmark = pytest.mark.slow

GOOD = """---
watch:
  type: file-fingerprint
  globs: "notes/*.txt"
  interval: 1s
urgency: normal
---
Read the changed note.
"""
HEADER = '---\nwatch:\n  type: file-fingerprint\n  globs: "x/*"\n'
# Each bad monitor's id and the reason its failure must give.
BAD = {
    "deep": "nested deeper than",
    "zero": "not a regular file",
    "fifo": "a FIFO",
    "stdin": "not a regular file",
    "big": "larger than the 256 KiB limit",
}
TIMEOUT = 60


def hostile_project(root: Path) -> None:
    claude = root / ".claude"
    monitors = claude / "monitors"
    for name in ("good", *BAD):
        (monitors / name).mkdir(parents=True)
    (claude / "agentmonitors.local.md").write_text("---\nenabled: true\n---\n")
    (monitors / "good" / "MONITOR.md").write_text(GOOD)
    deep = "[" * 2000 + "]" * 2000
    (monitors / "deep" / "MONITOR.md").write_text(f"{HEADER}extra: {deep}\n---\nbody\n")
    os.symlink("/dev/zero", monitors / "zero" / "MONITOR.md")
    os.mkfifo(monitors / "fifo" / "MONITOR.md")
    os.symlink("/dev/stdin", monitors / "stdin" / "MONITOR.md")
    (monitors / "big" / "MONITOR.md").write_text(HEADER + "---\n" + "a" * (10 * 1024 * 1024))
    (root / "notes").mkdir()
    (root / "notes" / "a.txt").write_text("first\n")


def agentmonitors(
    root: Path, *args: str, payload: str | None = None
) -> subprocess.CompletedProcess[str]:
    """The command as a user runs it, its stdin a pipe that stays open unless a
    payload is given (what ``/dev/stdin`` would block on)."""
    read_end, write_end = os.pipe()
    try:
        if payload is not None:
            os.write(write_end, payload.encode())
            os.close(write_end)
            write_end = -1
        return subprocess.run(
            [sys.executable, "-m", "agentmonitors", *args],
            stdin=read_end,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
            cwd=root,
        )
    finally:
        os.close(read_end)
        if write_end >= 0:
            os.close(write_end)


@pytest.fixture
def project(isolated_environment: Path) -> Iterator[Path]:
    hostile_project(isolated_environment)
    yield isolated_environment
    socket = read_local_state(str(isolated_environment)).socket
    if socket and ping(socket):
        call(socket, "stop", {})


def test_validate_names_each_bad_file_and_keeps_the_good_one(project: Path) -> None:
    done = agentmonitors(project, "validate", "--format", "json")
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert (report["valid"], report["invalid"]) == (1, len(BAD))
    assert [item["id"] for item in report["monitors"]] == ["good"]
    for name, reason in BAD.items():
        entry = next(item for item in report["errors"] if item["filePath"] == name)
        assert entry["paths"] == [str(project / ".claude" / "monitors" / name / "MONITOR.md")]
        assert reason in entry["error"], entry


def test_daemon_once_reports_each_and_the_good_monitor_emits(project: Path) -> None:
    first = agentmonitors(project, "daemon", "once", "--format", "json")
    # The broken monitors are failing: exit 1, one line naming them, the report on stdout.
    assert first.returncode == 1, first.stderr
    assert first.stderr.startswith("error: 5 monitor(s) failing: big, deep, fifo, stdin, zero")
    tick = json.loads(first.stdout)
    assert tick["evaluatedMonitors"] == ["good"]
    errors = {item["monitorId"]: item["message"] for item in tick["erroredObservations"]}
    for name, reason in BAD.items():
        assert reason in errors[name], errors
    (project / "notes" / "a.txt").write_text("changed\n")
    time.sleep(1.1)  # the good monitor's interval
    second = json.loads(agentmonitors(project, "daemon", "once", "--format", "json").stdout)
    assert len(second["emittedEventIds"]) == 1, second


def test_session_start_and_the_daemon_work_beside_them(project: Path) -> None:
    payload = {"session_id": "host-1", "hook_event_name": "SessionStart", "cwd": str(project)}
    started = agentmonitors(project, "session", "start", payload=json.dumps(payload))
    assert started.returncode == 0, started.stderr
    socket = read_local_state(str(project)).socket
    assert socket is not None
    wait_for(lambda: ping(socket), timeout=30)
    sessions = call(socket, "session.list", {})
    session_id = next(item["id"] for item in sessions if item["hostSessionId"] == "host-1")
    (project / "notes" / "a.txt").write_text("changed\n")
    events = wait_for(lambda: call(socket, "events.list", {"sessionId": session_id}), timeout=30)
    assert {event["monitorId"] for event in events} == {"good"}
    doctor = agentmonitors(project, "doctor")
    for name, reason in BAD.items():
        assert f"monitor:{name}: invalid" in doctor.stdout, doctor.stdout
        assert reason in doctor.stdout


@pytest.mark.parametrize("kind", ["fifo", "zero", "big"])
def test_a_hostile_enable_file_reads_as_disabled_promptly(
    isolated_environment: Path, kind: str
) -> None:
    root = isolated_environment
    (root / ".claude").mkdir()
    enable = root / ".claude" / "agentmonitors.local.md"
    if kind == "fifo":
        os.mkfifo(enable)
    elif kind == "zero":
        os.symlink("/dev/zero", enable)
    else:
        enable.write_text("---\nenabled: true\n---\n" + "#" * (64 * 1024))
    payload = {"session_id": "s", "hook_event_name": "UserPromptSubmit", "cwd": str(root)}
    done = agentmonitors(root, "hook", "deliver", payload=json.dumps(payload))
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert not read_local_state(str(root)).enabled


def test_a_host_hook_file_that_is_a_fifo_fails_init_promptly(isolated_environment: Path) -> None:
    root = isolated_environment
    (root / ".cursor").mkdir()
    os.mkfifo(root / ".cursor" / "hooks.json")
    done = agentmonitors(root, "init", "--enable-only", "--host", "cursor")
    assert done.returncode == 1
    assert done.stderr.startswith(
        f"error: {root / '.cursor' / 'hooks.json'}: cannot read it: a FIFO"
    )
