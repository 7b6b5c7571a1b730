"""A cloned project's monitors run commands or read outside it only once the user approves.

``daemon once`` runs as a real subprocess over a real project: a command-poll monitor's
command writes a marker file, so "it did not run" is a file that is not there.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.catalog.trust import ledger_path
from tests.conftest import CliResult
from tests.security.hostile import add_monitor
from tests.waiting import wait_for

Run = Callable[..., CliResult]

MARKER_MONITOR = """---
watch:
  type: command-poll
  command: ["sh", "-c", "echo ran >> {marker}; echo ok"]
  interval: 1s
---
React.
"""
OUTSIDE_MONITOR = """---
watch:
  type: file-fingerprint
  globs: "../outside/*"
  interval: 1s
---
Read it.
"""
INSIDE_MONITOR = """---
watch:
  type: file-fingerprint
  globs: "notes/*.txt"
---
Read it.
"""


@pytest.fixture
def project(isolated_environment: Path, run_cli: Run) -> Path:
    root = isolated_environment / "repo"
    root.mkdir()
    os.chdir(root)
    assert run_cli("init", "--enable-only").code == 0
    return root


def once(root: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """A real ``daemon once`` process, as a user runs it in the project."""
    return subprocess.run(
        [sys.executable, "-m", "agentmonitors", "daemon", "once", "--force", *extra],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "PWD": str(root)},
    )


def once_json(root: Path) -> dict[str, Any]:
    done = once(root, "--format", "json")
    # A failing monitor (the scaffold's `git ls-remote origin` here has no origin) makes
    # the tick exit 1 with its report still on stdout.
    assert done.returncode == 0 or "monitor(s) failing" in done.stderr, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


BLOCKED = "blocked: awaiting-approval"


@pytest.mark.slow
def test_a_project_command_runs_only_after_approval_and_again_after_an_edit(
    project: Path, run_cli: Run
) -> None:
    marker = project.parent / "marker.txt"
    path = add_monitor(project, "poller", MARKER_MONITOR.format(marker=marker))

    first = once_json(project)
    assert {"monitorId": "poller", "reason": BLOCKED} in first["skippedMonitors"]
    assert "poller" not in first["evaluatedMonitors"]
    assert not marker.exists()
    text = once(project)
    assert f"poller: {BLOCKED}" in text.stdout
    assert "agentmonitors monitor approve poller" in text.stdout
    assert not marker.exists()

    approved = run_cli("monitor", "approve", "--yes", "poller", "--format", "json")
    assert approved.code == 0, approved.err
    assert [row["monitorId"] for row in approved.json()["approved"]] == ["poller"]
    assert approved.json()["approved"][0]["reach"]["argv"][0] == "sh"
    second = once_json(project)
    assert "poller" in second["evaluatedMonitors"]
    assert marker.read_text() == "ran\n"

    # A changed argv is a different command: blocked again until re-approved.
    path.write_text(MARKER_MONITOR.format(marker=marker).replace("echo ok", "echo changed"))
    third = once_json(project)
    assert {"monitorId": "poller", "reason": BLOCKED} in third["skippedMonitors"]
    assert marker.read_text() == "ran\n"


@pytest.mark.slow
def test_a_glob_leaving_the_workspace_waits_for_approval(project: Path, run_cli: Run) -> None:
    outside = project.parent / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("private\n")
    add_monitor(project, "peek", OUTSIDE_MONITOR)
    add_monitor(project, "notes", INSIDE_MONITOR)

    first = once_json(project)
    assert {"monitorId": "peek", "reason": BLOCKED} in first["skippedMonitors"]
    # Inside the workspace needs nothing.
    assert "notes" in first["evaluatedMonitors"]
    assert first["emittedEventIds"] == []
    # Never run (it waits for approval): its history is empty, which is no failure.
    blocked = run_cli("monitor", "history", "peek", "--format", "json")
    assert (blocked.code, blocked.json()) == (0, [])

    assert run_cli("monitor", "approve", "--yes", "--all").code == 0
    second = once_json(project)
    assert "peek" in second["evaluatedMonitors"]
    history = run_cli("monitor", "history", "peek", "--format", "json")
    assert history.code == 0, history.err
    assert [row["monitorId"] for row in history.json()] == ["peek"]
    settled(outside / "new.txt", "later\n")
    # The next run once its 1 s interval is up reports the new outside file.
    assert len(wait_for(lambda: once_json(project)["emittedEventIds"], timeout=20)) == 1


def settled(path: Path, text: str) -> None:
    """Write a file as if a while ago, so the fingerprint takes it as settled at once."""
    path.write_text(text)
    past = path.stat().st_mtime - 60
    os.utime(path, (past, past))


@pytest.mark.slow
def test_a_glob_through_a_symlink_out_of_the_workspace_waits_then_is_followed(
    project: Path, run_cli: Run
) -> None:
    outside = project.parent / "outside"
    outside.mkdir()
    (project / "linked").symlink_to(outside)
    add_monitor(project, "peek", OUTSIDE_MONITOR.replace("../outside/*", "linked/*"))
    assert {"monitorId": "peek", "reason": BLOCKED} in once_json(project)["skippedMonitors"]

    assert run_cli("monitor", "approve", "--yes", "peek").code == 0
    assert "peek" in once_json(project)["evaluatedMonitors"]
    settled(outside / "new.txt", "later\n")
    # The next run once its 1 s interval is up reports the new outside file.
    assert len(wait_for(lambda: once_json(project)["emittedEventIds"], timeout=20)) == 1


@pytest.mark.slow
def test_a_user_scope_monitor_runs_unapproved(project: Path, isolated_environment: Path) -> None:
    marker = project.parent / "user-marker.txt"
    user_root = Path(os.environ["HOME"]) / ".claude" / "monitors" / "mine"
    user_root.mkdir(parents=True)
    (user_root / "MONITOR.md").write_text(MARKER_MONITOR.format(marker=marker))
    result = once_json(project)
    assert "mine" in result["evaluatedMonitors"]
    assert marker.read_text() == "ran\n"


@pytest.mark.slow
def test_a_monitor_the_user_scaffolds_runs_without_approval(project: Path, run_cli: Run) -> None:
    created = run_cli("init", "upstream", "--yes", "--type", "command-poll")
    assert created.code == 0, created.err
    assert "Approved as created" in created.out
    assert "agentmonitors monitor approve upstream" in created.out
    result = once_json(project)
    assert "upstream" in result["evaluatedMonitors"]
    assert not any(item.get("reason") == BLOCKED for item in result["skippedMonitors"])


def test_approve_list_shows_what_is_approved_and_what_waits(project: Path, run_cli: Run) -> None:
    add_monitor(project, "first", MARKER_MONITOR.format(marker="/tmp/never-a"))
    add_monitor(
        project,
        "second",
        MARKER_MONITOR.format(marker="/tmp/never-b").replace(
            "interval: 1s", "interval: 1s\n  env:\n    API_TOKEN: hunter2"
        ),
    )
    add_monitor(project, "notes", INSIDE_MONITOR)
    assert run_cli("monitor", "approve", "--yes", "first").code == 0

    listing = run_cli("monitor", "approve", "--list", "--format", "json")
    assert listing.code == 0, listing.err
    rows = {row["monitorId"]: row for row in listing.json()["monitors"]}
    assert set(rows) == {"first", "second"}
    assert rows["first"]["status"] == "approved"
    assert rows["first"]["approvedAt"]
    assert rows["second"]["status"] == "awaiting-approval"
    # Env keys are part of what is approved; values (secrets) are never stored.
    assert rows["second"]["reach"]["envKeys"] == ["API_TOKEN"]
    assert "hunter2" not in listing.out
    assert "hunter2" not in Path(ledger_path(str(project))).read_text()

    text = run_cli("monitor", "approve", "--list", "--format", "text")
    assert "approved  first: runs" in text.out
    assert "waits     second: runs" in text.out


def test_the_ledger_is_owner_only_and_outside_the_repository(project: Path, run_cli: Run) -> None:
    add_monitor(project, "first", MARKER_MONITOR.format(marker="/tmp/never-c"))
    assert run_cli("monitor", "approve", "--yes", "first").code == 0
    path = Path(ledger_path(str(project)))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert not path.is_relative_to(project)


def test_approve_names_what_it_cannot_approve(project: Path, run_cli: Run) -> None:
    add_monitor(project, "first", MARKER_MONITOR.format(marker="/tmp/never-d"))
    add_monitor(project, "notes", INSIDE_MONITOR)
    unknown = run_cli("monitor", "approve", "--yes", "nope")
    assert unknown.code == 1
    assert unknown.err.startswith('error: Unknown monitor id "nope"')
    assert "first" in unknown.err
    neither = run_cli("monitor", "approve", "--yes")  # which of the three: a usage error
    assert (neither.code, neither.err.count("\n")) == (2, 1)
    assert neither.err.startswith("error: monitor approve takes")
    inside = run_cli("monitor", "approve", "--yes", "notes")
    assert inside.code == 0
    assert "needs no approval" in inside.out


def test_explain_says_the_monitor_waits_and_how_to_approve(project: Path, run_cli: Run) -> None:
    add_monitor(project, "first", MARKER_MONITOR.format(marker="/tmp/never-e"))
    report = run_cli("monitor", "explain", "first", "--format", "json")
    assert report.code == 0, report.err
    stage = report.json()["stages"][0]
    assert stage["status"] == "pending"
    assert stage["reason"].startswith(BLOCKED)
    assert "`agentmonitors monitor approve first`" in stage["reason"]
    assert report.json()["verdict"]["stage"] == "definition"


def test_validate_passes_a_waiting_monitor_and_says_it_waits(project: Path, run_cli: Run) -> None:
    add_monitor(project, "first", MARKER_MONITOR.format(marker="/tmp/never-f"))
    result = run_cli("validate", "--format", "text")
    assert result.code == 0, result.out + result.err
    assert "first" in result.out
    assert "awaiting approval" in result.out
    assert "agentmonitors monitor approve first" in result.out
    as_json = run_cli("validate", "--format", "json")
    assert as_json.code == 0
    assert [item["id"] for item in as_json.json()["awaitingApproval"]] == ["first"]
    assert run_cli("monitor", "approve", "--yes", "first").code == 0
    after = run_cli("validate", "--format", "text")
    assert "awaiting approval" not in after.out
    assert run_cli("validate", "--format", "json").json()["awaitingApproval"] == []
