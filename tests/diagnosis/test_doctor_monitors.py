"""``doctor`` per monitor: awaiting approval, a branch that does not exist, a glob that
matches nothing, and a database the daemon had to reopen."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliResult
from tests.transports.clocked_project import Project

Run = Callable[..., CliResult]

COMMAND_MONITOR = """---
watch:
  type: command-poll
  command: ["sh", "-c", "echo ok"]
---
React.
"""
BRANCH_MONITOR = """---
watch:
  type: incoming-changes
  paths: ["src"]
  branch: release
---
Review.
"""


def doctor(run_cli: Run) -> tuple[int, dict[str, Any]]:
    result = run_cli("doctor", "--format", "json")
    return result.code, json.loads(result.out)


def check(report: dict[str, Any], name: str) -> dict[str, Any]:
    return next(item for item in report["checks"] if item["name"] == name)


def add_monitor(root: Path, monitor_id: str, text: str) -> None:
    folder = root / ".claude" / "monitors" / monitor_id
    folder.mkdir(parents=True)
    (folder / "MONITOR.md").write_text(text)


def test_a_project_monitor_awaiting_approval_names_the_approve_command(
    run_cli: Run, isolated_environment: Path
) -> None:
    assert run_cli("init", "--enable-only").code == 0
    add_monitor(isolated_environment, "poll", COMMAND_MONITOR)
    code, report = doctor(run_cli)
    assert code == 0, report
    found = check(report, "monitor:poll")
    assert found["status"] == "idle"
    assert found["detail"].startswith("blocked: awaiting-approval")
    assert found["remediation"].startswith("agentmonitors monitor approve poll")
    [row] = report["monitors"]
    assert row["blocked"] == "blocked: awaiting-approval"
    assert check(report, "monitors-valid")["detail"] == "1 valid monitor(s), 1 awaiting approval"

    assert run_cli("monitor", "approve", "--yes", "poll").code == 0
    _, report = doctor(run_cli)
    assert check(report, "monitor:poll")["detail"] == "valid; not observed yet"


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def test_an_incoming_changes_branch_that_does_not_exist_is_named(
    run_cli: Run, isolated_environment: Path
) -> None:
    root = isolated_environment
    git(root, "init", "-q", "-b", "main")
    git(
        root,
        "-c",
        "user.email=a@b",
        "-c",
        "user.name=a",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "x",
    )
    assert run_cli("init", "--enable-only").code == 0
    add_monitor(root, "incoming", BRANCH_MONITOR)
    _, report = doctor(run_cli)
    found = check(report, "monitor:incoming")
    assert found["status"] == "idle", found
    assert 'its branch "release" does not exist' in found["detail"]
    assert report["monitors"][0]["targetProblem"].startswith('its branch "release"')

    git(root, "branch", "release")
    _, report = doctor(run_cli)
    assert "does not exist" not in check(report, "monitor:incoming")["detail"]


@pytest.mark.slow
def test_a_glob_that_stops_matching_is_named(clocked_project: Project, run_cli: Run) -> None:
    project = clocked_project
    project.start_session("host-g")
    _, report = doctor(run_cli)
    assert check(report, "monitor:notes")["status"] == "pass"
    (project.root / "notes" / "a.txt").unlink()
    _, report = doctor(run_cli)
    found = check(report, "monitor:notes")
    assert found["status"] == "idle"
    assert "notes/*.txt" in found["detail"] and "match no file" in found["detail"]


@pytest.mark.slow
def test_a_database_the_daemon_reopened_is_reported(clocked_project: Project, run_cli: Run) -> None:
    project = clocked_project
    project.start_session("host-db")
    os.unlink(project.daemon.db)
    project.daemon.tick()  # the daemon checks its store's identity on every tick
    code, report = doctor(run_cli)
    assert report["database"]["reopened"]["reason"] == "deleted"
    assert report["database"]["path"] == project.daemon.db
    detail = check(report, "daemon-reachable")["detail"]
    assert "database was deleted while it ran and was reopened" in detail
    text = run_cli("doctor").out
    assert "Database: deleted while the daemon ran; reopened at" in text
    assert code in (0, 1)


def test_an_unreadable_database_is_a_finding_and_is_left_alone(
    run_cli: Run, isolated_environment: Path
) -> None:
    from agentmonitors.paths import resolve_db_path

    assert run_cli("init", "--enable-only").code == 0
    db_path = Path(resolve_db_path(str(isolated_environment)))
    db_path.parent.mkdir(parents=True)
    garbage = b"this is not a database" * 300
    db_path.write_bytes(garbage)
    before = db_path.stat().st_mtime_ns
    code, report = doctor(run_cli)
    assert code == 1
    found = check(report, "lead-session")
    assert found["status"] == "fail"
    assert f"cannot read the database {db_path}" in found["detail"]
    assert report["database"]["path"] == str(db_path)
    assert "Database: " in run_cli("doctor").out
    assert db_path.read_bytes() == garbage and db_path.stat().st_mtime_ns == before
    assert sorted(os.listdir(db_path.parent)) == [db_path.name]
