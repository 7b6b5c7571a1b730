"""A failing monitor is reported as failing, with its reason, by every command that
judges health; a failing command is delivered with why; failures back off no faster
than the monitor's interval; intervals have floors. Driven through the installed CLI."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.daemon.clocked import ClockedDaemon
from tests.security.hostile import add_monitor, agentmonitors, once_json
from tests.transports.clocked_project import Project

# Reads one line from state.txt: "fail" exits 3 with a few lines on stderr.
TOOL = """\
import sys
state = open("state.txt").read().strip()
if state == "fail":
    sys.stderr.write("warming up\\nfatal: the release server refused us\\nhint: retry later\\n")
    sys.exit(3)
print(state)
"""


def cli_ok(root: Path, *args: str) -> str:
    done = agentmonitors(root, *args)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def cli_json(root: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    done = agentmonitors(root, *args, "--format", "json")
    return done.returncode, json.loads(done.stdout), done.stderr


def observe_once(root: Path, monitor_id: str) -> None:
    """``daemon once --force`` until it observes ``monitor_id`` (a 1 s interval that the
    last run began may not be over yet: history keeps whole seconds)."""
    for _ in range(40):
        if monitor_id in once_json(root)["evaluatedMonitors"]:
            return
    raise AssertionError(f"{monitor_id} was never observed")


def check_of(report: dict[str, Any], monitor_id: str) -> dict[str, Any]:
    return next(c for c in report["checks"] if c["name"] == f"monitor:{monitor_id}")


def closed_port() -> int:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@pytest.fixture
def project(isolated_environment: Path) -> Path:
    root = isolated_environment
    cli_ok(root, "init", "--enable-only")
    return root


# ----------------------------------------------------------------- point 3: delivered why


def test_a_non_zero_exit_is_delivered_with_its_status_and_stderr(
    project: Path, tmp_path: Path
) -> None:
    (project / "tool.py").write_text(TOOL)
    (project / "state.txt").write_text("v1\n")
    add_monitor(
        project,
        "release",
        f"---\nwatch:\n  type: command-poll\n  command: ['{sys.executable}', tool.py]\n"
        "  interval: 1m\nurgency: high\n---\nCheck the release server.\n",
    )
    cli_ok(project, "monitor", "approve", "--yes", "release")
    daemon = ClockedDaemon(project, tmp_path / "clock")
    daemon.start()
    try:
        room = Project(project, daemon)
        room.start_session("host-1")
        (project / "state.txt").write_text("fail\n")
        daemon.advance(60)
        errored = daemon.tick()["erroredObservations"]
        assert errored == [
            {
                "monitorId": "release",
                "message": "exit status 3: fatal: the release server refused us",
            }
        ]
        daemon.advance(16)  # past the settle of a high event
        daemon.tick()
        out, _err = room.prompt("host-1", "hi")
        context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
        assert "Command failing: " in context
        assert "exit status 3" in context
        assert "fatal: the release server refused us\nhint: retry later" in context
        assert "Check the release server." in context  # the instructions stay
        # The stored payload keeps its fields and grows the exit code.
        (payload,) = daemon.query(
            "SELECT payload FROM monitor_events WHERE title LIKE 'Command failing%'"
        )
        stored = json.loads(payload[0])
        assert stored["exitCode"] == 3
        assert stored["error"] == "exit status 3"
        assert stored["stderrTail"].endswith("hint: retry later\n")
    finally:
        daemon.stop()


def test_ok_exit_codes_make_a_non_zero_exit_ordinary(project: Path) -> None:
    (project / "tool.py").write_text(TOOL)
    (project / "state.txt").write_text("fail\n")
    add_monitor(
        project,
        "grep-like",
        f"---\nwatch:\n  type: command-poll\n  command: ['{sys.executable}', tool.py]\n"
        "  ok-exit-codes: [0, 3]\n---\nAct.\n",
    )
    cli_ok(project, "monitor", "approve", "--yes", "grep-like")
    report = once_json(project)
    assert report["erroredObservations"] == []
    _code, doctor, _ = cli_json(project, "doctor")
    assert check_of(doctor, "grep-like")["status"] == "pass"


# ------------------------------------------------- point 8: failing until it succeeds


def test_the_scaffolded_command_without_origin_is_failing_not_healthy(project: Path) -> None:
    # `init --type command-poll` scaffolds `git ls-remote origin ...`: exit 128 here.
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    cli_ok(project, "init", "upstream", "--type", "command-poll")
    cli_ok(project, "monitor", "approve", "--yes", "upstream")
    once_json(project)

    code, doctor, err = cli_json(project, "doctor")
    check = check_of(doctor, "upstream")
    assert check["status"] == "fail"
    assert "exit status 128" in check["detail"]
    assert "origin" in check["detail"]
    assert code == 1
    assert "monitor:upstream" in err and err.count("\n") == 1

    _code, explained, _ = cli_json(project, "monitor", "explain", "upstream")
    assert explained["verdict"]["status"] == "failure"
    assert "exit status 128" in explained["verdict"]["reason"]


def test_a_program_gone_after_an_ack_is_failing_until_it_runs_again(project: Path) -> None:
    tool = project / "bin" / "status-tool"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\necho ok\n")
    tool.chmod(0o755)
    add_monitor(
        project,
        "status",
        f"---\nwatch:\n  type: command-poll\n  command: ['{tool}']\n  interval: 1s\n---\nAct.\n",
    )
    cli_ok(project, "monitor", "approve", "--yes", "status")
    observe_once(project, "status")
    _code, doctor, _ = cli_json(project, "doctor")
    assert check_of(doctor, "status")["status"] == "pass"

    tool.unlink()  # the program is gone: every run fails
    for _ in range(2):  # the second run emits nothing, and is still a failure
        observe_once(project, "status")
        _code, doctor, _ = cli_json(project, "doctor")
        check = check_of(doctor, "status")
        assert check["status"] == "fail"
        assert "Cannot run" in check["detail"] and "ENOENT" in check["detail"]
        _code, explained, _ = cli_json(project, "monitor", "explain", "status")
        assert explained["verdict"]["status"] == "failure"

    tool.write_text("#!/bin/sh\necho ok\n")
    tool.chmod(0o755)
    observe_once(project, "status")
    _code, doctor, _ = cli_json(project, "doctor")
    assert check_of(doctor, "status")["status"] == "pass"
    _code, explained, _ = cli_json(project, "monitor", "explain", "status")
    assert explained["verdict"]["status"] != "failure"


# ---------------------------------------------- point 9: no retry sooner than interval


def test_daemon_once_never_retries_a_failure_sooner_than_its_interval(project: Path) -> None:
    add_monitor(
        project,
        "status",
        f"---\nwatch:\n  type: api-poll\n  url: http://127.0.0.1:{closed_port()}/x\n"
        "  interval: 1m\n---\nAct.\n",
    )
    # Written a while ago: an edit after the failure would end its wait (it may be the fix).
    os.utime(project / ".claude/monitors/status/MONITOR.md", (1_000_000_000, 1_000_000_000))
    cli_ok(project, "monitor", "approve", "--yes", "status")
    first = once_json(project)
    assert [item["monitorId"] for item in first["erroredObservations"]] == ["status"]
    done = agentmonitors(project, "daemon", "once", "--format", "json")
    # Still failing while it waits out its backoff: exit 1, the line names it.
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("error: 1 monitor(s) failing: status ")
    again = json.loads(done.stdout)
    assert again["evaluatedMonitors"] == []
    (skipped,) = [row for row in again["skippedMonitors"] if row["monitorId"] == "status"]
    # The retry waits the 1 m interval, not the 5 s first step of the backoff.
    _code, explained, _ = cli_json(project, "monitor", "explain", "status")
    scheduling = next(s for s in explained["stages"] if s["id"] == "scheduling")
    retry_at = scheduling["details"]["retryAt"]
    observed = next(s for s in explained["stages"] if s["id"] == "observation")
    assert skipped["nextDueAt"] == retry_at
    assert _seconds(retry_at) - _seconds(observed["details"]["observedAt"]) == 60


def test_a_daemon_started_while_a_monitor_fails_keeps_its_count_and_its_wait(
    project: Path,
) -> None:
    add_monitor(
        project,
        "status",
        f"---\nwatch:\n  type: api-poll\n  url: http://127.0.0.1:{closed_port()}/x\n"
        "  interval: 5m\n---\nAct.\n",
    )
    os.utime(project / ".claude/monitors/status/MONITOR.md", (1_000_000_000, 1_000_000_000))
    cli_ok(project, "monitor", "approve", "--yes", "status")
    for _ in range(3):
        once_json(project)  # --force: each run observes it, and it fails
    cli_ok(project, "daemon", "start")
    try:
        _code, explained, _ = cli_json(project, "monitor", "explain", "status")
    finally:
        agentmonitors(project, "daemon", "stop")
    scheduling = next(s for s in explained["stages"] if s["id"] == "scheduling")
    assert scheduling["details"]["consecutiveFailures"] == 3, scheduling
    assert "after 3 consecutive failures" in scheduling["reason"]
    assert explained["verdict"]["status"] == "failure"


def _seconds(iso: str) -> int:
    from datetime import datetime

    return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp())


# ------------------------------------------------------- point 10: durations and floors


def test_intervals_take_ms_and_each_source_has_a_floor(project: Path) -> None:
    add_monitor(
        project,
        "tight",
        "---\nwatch:\n  type: command-poll\n  command: [echo, hi]\n  interval: 0s\n---\nAct.\n",
    )
    add_monitor(
        project,
        "quick",
        "---\nwatch:\n  type: command-poll\n  command: [echo, hi]\n  interval: 1500ms\n---\nAct.\n",
    )
    add_monitor(
        project,
        "files",
        "---\nwatch:\n  type: file-fingerprint\n  globs: ['*.md']\n  interval: 100ms\n---\nAct.\n",
    )
    done = agentmonitors(project, "validate", "--format", "json")
    assert done.returncode == 1
    report = json.loads(done.stdout)
    errors = {entry["filePath"]: entry for entry in report["errors"]}
    assert set(errors) == {"tight", "files"}  # 1500ms is a valid duration above the floor
    assert errors["tight"]["error"].startswith(
        'watch.interval: "0s" is below the minimum interval of command-poll, 1s'
    )
    assert errors["tight"]["paths"] == [str(project / ".claude/monitors/tight/MONITOR.md")]
    assert "minimum interval of file-fingerprint, 500ms" in errors["files"]["error"]

    schema = json.loads(cli_ok(project, "schema", "generate"))
    floors = {
        branch["if"]["properties"]["watch"]["properties"]["type"]["const"]: branch["then"][
            "properties"
        ]["watch"]["properties"]
        .get("interval", {})
        .get("x-minimum-interval")
        for branch in schema["allOf"]
    }
    assert floors["command-poll"] == "1s"
    assert floors["file-fingerprint"] == "500ms"


# ------------------------------------------------ done when: doctor on five broken monitors


def test_doctor_names_each_broken_monitor_and_its_fix_and_exits_non_zero(project: Path) -> None:
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    monitors = {
        "missing": "type: command-poll\n  command: [agentmonitors-no-such-tool]",
        "nonzero": "type: command-poll\n  command: [git, ls-remote, origin]",
        "unreachable": f"type: api-poll\n  url: http://127.0.0.1:{closed_port()}/status",
        "typo-glob": "type: file-fingerprint\n  globs: ['doc/**/*.md']",
        "unapproved": "type: command-poll\n  command: [echo, hi]",
    }
    (project / "docs").mkdir()
    (project / "docs" / "a.md").write_text("a\n")
    for monitor_id, watch in monitors.items():
        add_monitor(project, monitor_id, f"---\nwatch:\n  {watch}\n---\nAct.\n")
    cli_ok(project, "monitor", "approve", "--yes", "missing", "nonzero", "unreachable")
    once_json(project)

    code, report, err = cli_json(project, "doctor")
    checks = {monitor_id: check_of(report, monitor_id) for monitor_id in monitors}
    assert checks["missing"]["status"] == "fail"
    assert "Cannot run agentmonitors-no-such-tool" in checks["missing"]["detail"]
    assert checks["nonzero"]["status"] == "fail"
    assert "exit status 128" in checks["nonzero"]["detail"]
    assert checks["unreachable"]["status"] == "fail"
    assert "127.0.0.1" in checks["unreachable"]["detail"]
    assert checks["typo-glob"]["status"] == "idle"
    assert "doc/**/*.md" in checks["typo-glob"]["detail"]
    assert "match no file" in checks["typo-glob"]["detail"]
    assert checks["unapproved"]["status"] == "idle"
    assert "awaiting-approval" in checks["unapproved"]["detail"]
    assert "agentmonitors monitor approve unapproved" in checks["unapproved"]["remediation"]
    for monitor_id in ("missing", "nonzero", "unreachable", "typo-glob"):
        assert checks[monitor_id]["remediation"], monitor_id
    assert code == 1
    assert report["ok"] is False
    # One line on stderr says why the exit is non-zero; stdout stays one JSON document.
    assert err.count("\n") == 1 and err.startswith("error: ")
    for monitor_id in ("missing", "nonzero", "unreachable"):
        assert f"monitor:{monitor_id}" in err

    text = agentmonitors(project, "doctor")
    assert text.returncode == 1
    for monitor_id in monitors:
        assert f"monitor:{monitor_id}" in text.stdout
    assert "agentmonitors monitor explain missing" in text.stdout
