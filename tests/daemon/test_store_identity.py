"""The database file deleted, replaced or unopenable: nothing is lost silently.

A real daemon process over a real SQLite file; the file is removed or swapped under it,
and Claude Code's exact hook payloads go through ``session start`` and ``hook deliver``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from agentmonitors.daemon.client import ping
from agentmonitors.paths import resolve_db_path
from tests.conftest import CliResult
from tests.transports.clocked_project import Project, clocked_project  # noqa: F401

pytestmark = pytest.mark.slow


def status(project: Project) -> dict[str, object]:
    code, out, err = project.hook(["daemon", "status", "--format", "json"], {})
    assert code == 0, err
    report = json.loads(out)
    assert isinstance(report, dict)
    return report


def test_a_deleted_database_is_noticed_and_reopened_with_its_sessions(
    clocked_project: Project,  # noqa: F811
) -> None:
    project = clocked_project
    daemon = project.daemon
    project.start_session("host-1")
    before = project.settled_change("one\n")
    db = daemon.db
    assert Path(db).exists()

    os.remove(db)
    # The next tick checks the file: a fresh store at the same path, which the
    # file monitor baselines again.
    daemon.advance(31)
    daemon.tick()
    assert Path(db).exists()
    assert daemon.query("SELECT id FROM monitor_events") == []

    # Later events land in the file at the path, and the running session is still
    # served from it.
    after = project.settled_change("two\n")
    assert after != before
    assert [row[0] for row in daemon.query("SELECT id FROM monitor_events")] == [after]
    assert daemon.query("SELECT host_session_id FROM agent_sessions") == [("host-1",)]
    out, _err = project.prompt("host-1", "next")
    assert "Read the changed note." in out

    report = status(project)
    database = report["database"]
    assert isinstance(database, dict)
    assert database["path"] == db
    reopened = database["reopened"]
    assert isinstance(reopened, dict)
    assert (reopened["reason"], reopened["sessionsKept"]) == ("deleted", 1)
    code, text, _err = project.hook(["daemon", "status"], {})
    assert code == 0
    assert f"Database: {db} was deleted while the daemon ran; reopened at" in text

    log = daemon.stop()
    assert (
        f"AgentMon database {db} was deleted while the daemon ran; reopened a fresh one"
        " (1 session(s) carried over; events stored before are not)." in log
    )


def test_a_database_replaced_by_garbage_stops_the_daemon_and_says_why(
    clocked_project: Project,  # noqa: F811
) -> None:
    project = clocked_project
    daemon = project.daemon
    db = daemon.db
    scratch = Path(db + ".new")
    scratch.write_bytes(b"this is not a database " * 100)
    os.replace(scratch, db)

    with pytest.raises(Exception, match="cannot be reopened"):
        daemon.tick()
    process = daemon.process
    assert process is not None
    out, _ = process.communicate(timeout=20)
    daemon.process = None
    assert process.returncode == 0
    assert f"AgentMon database {db} was replaced while the daemon ran and cannot be" in out
    assert "file is not a database" in out


def test_session_start_names_the_database_it_cannot_open(
    isolated_environment: Path, run_cli: Callable[..., CliResult]
) -> None:
    assert run_cli("init", "--enable-only").code == 0
    root = isolated_environment
    db = resolve_db_path(str(root))
    Path(db).parent.mkdir(parents=True, exist_ok=True)
    Path(db).write_bytes(b"this is not a database " * 100)

    payload = {"session_id": "host-1", "hook_event_name": "SessionStart", "cwd": str(root)}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "agentmonitors", "session", "start"],
        input=json.dumps(payload).encode(),
        capture_output=True,
        timeout=60,
        check=False,
        cwd=root,
    )
    elapsed = time.monotonic() - started

    assert done.returncode == 1
    assert done.stdout == b""
    lines = done.stderr.decode().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(
        f"error: Daemon failed to start: database {db}: file is not a database (log: "
    )
    # It says so as soon as the daemon has exited, not after the whole boot wait.
    assert elapsed < 8
    socket_dir = Path(db).parent
    assert not any(ping(str(path)) for path in socket_dir.glob("*.sock"))


def test_a_daemon_whose_project_folder_was_deleted_stops_and_recreates_nothing(
    clocked_project: Project,  # noqa: F811
) -> None:
    project = clocked_project
    daemon = project.daemon
    project.start_session("host-1")
    workspace = project.root
    shutil.rmtree(workspace)

    process = daemon.process
    assert process is not None
    daemon.advance(31)
    with contextlib.suppress(Exception):
        daemon.tick()  # the daemon may stop before it answers
    out, _ = process.communicate(timeout=20)
    daemon.process = None
    assert process.returncode == 0
    assert f"AgentMon workspace {workspace} no longer exists; stopping." in out
    assert not workspace.exists()
