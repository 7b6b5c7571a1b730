"""A file whose name is not UTF-8 is watched and shown escaped; the files beside it keep
working (``daemon once`` as a user runs it, then the agent's ``summary`` of what it stored)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow

NOTES = """---
watch:
  type: file-fingerprint
  globs: "notes/*.txt"
  interval: 1s
urgency: normal
---
Read the changed note.
"""
BAD = b"bad\xff\x80.txt"
SHOWN = "bad\\xff\\x80.txt"


def agentmonitors(root: Path, *args: str) -> Any:
    done = subprocess.run(
        [sys.executable, "-m", "agentmonitors", *args, "--format", "json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=root,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def tick(root: Path) -> dict[str, Any]:
    time.sleep(1.1)  # the monitor's interval
    result: dict[str, Any] = agentmonitors(root, "daemon", "once")
    assert result["erroredObservations"] == [], result
    return result


def objects(root: Path) -> dict[str, tuple[str, str]]:
    summary = agentmonitors(root, "summary", "notes")
    return {
        item["objectKey"].rsplit("/", 1)[-1]: (item["changeKind"], item["title"])
        for item in summary["objects"]
    }


def test_a_name_that_is_not_utf8_is_watched_escaped_beside_the_others(
    isolated_environment: Path,
) -> None:
    root = isolated_environment
    (root / ".claude" / "monitors" / "notes").mkdir(parents=True)
    (root / ".claude" / "agentmonitors.local.md").write_text("---\nenabled: true\n---\n")
    (root / ".claude" / "monitors" / "notes" / "MONITOR.md").write_text(NOTES)
    notes = root / "notes"
    notes.mkdir()
    (notes / "a.txt").write_text("first\n")
    bad = os.path.join(os.fsencode(notes), BAD)
    tick(root)  # the baseline

    with open(bad, "wb") as handle:
        handle.write(b"one\n")
    assert len(tick(root)["emittedEventIds"]) == 1
    kind, title = objects(root)[SHOWN]
    assert kind == "created"
    assert title.endswith(f"notes/{SHOWN}") and "\udcff" not in title

    with open(bad, "wb") as handle:
        handle.write(b"two, longer\n")
    (notes / "a.txt").write_text("second\n")
    assert len(tick(root)["emittedEventIds"]) == 2
    seen = objects(root)
    assert seen["a.txt"][0] == "modified"
    assert seen[SHOWN][0] == "modified"

    # Unchanged: nothing new, and no endless created/deleted pair for the odd name.
    assert tick(root)["emittedEventIds"] == []

    os.unlink(bad)
    assert len(tick(root)["emittedEventIds"]) == 1
    assert objects(root)[SHOWN][0] == "deleted"


def test_a_running_daemon_keeps_its_file_events_through_such_a_name(
    isolated_environment: Path, run_cli: Any
) -> None:
    """The watcher refuses to hand over such a path; the daemon rescans and keeps
    watching, so both changes arrive long before the 30 s interval would find them."""
    from agentmonitors.daemon.client import call, ping
    from agentmonitors.workspace import read_local_state
    from tests.transports.test_hook_end_to_end import make_project
    from tests.waiting import wait_for

    project = make_project(isolated_environment, run_cli)
    try:
        project.start_session()
        bad = os.path.join(os.fsencode(project.root / "notes"), b"new\xfe.txt")
        with open(bad, "wb") as handle:
            handle.write(b"one\n")
        titles = wait_for(lambda: [event["title"] for event in project.events()], timeout=10)
        assert titles[0].endswith("notes/new\\xfe.txt"), titles
        project.change("a.txt", "changed\n")
        titles = [event["title"] for event in project.events()]
        assert titles[0].endswith("notes/a.txt"), titles
        sessions = call(project.socket, "session.list", {})
        assert sessions
    finally:
        socket = read_local_state(project.ws).socket
        if socket and ping(socket):
            call(socket, "stop", {})
    logs = list((isolated_environment.parent / "home").rglob("daemon.log"))
    assert logs and "file watcher" not in logs[0].read_text()
