"""``doctor`` reports ``events follow`` like the hook and the channel: a real daemon, a
session opened by ``session start``, a real ``events follow`` process writing its
heartbeat, then that process killed as a crash would leave it."""

from __future__ import annotations

import signal
from collections.abc import Callable
from typing import Any

import pytest

from agentmonitors.workspace import enable_file_path
from tests.conftest import CliResult
from tests.diagnosis.test_doctor_problems import age_record, check, doctor, problems
from tests.transports.clocked_project import Project
from tests.transports.test_follow import Follow, follow_records
from tests.transports.test_follow_host import Running
from tests.transports.test_follow_wake import set_wake
from tests.transports.test_live_hint import set_live
from tests.waiting import wait_for

Run = Callable[..., CliResult]
pytestmark = pytest.mark.slow

HOST = "host-follow-doc"


def follow_row(report: dict[str, Any]) -> dict[str, Any]:
    return next(row for row in report["transports"] if row["name"] == "follow")


def running_follower(project: Project) -> tuple[str, Follow]:
    session_id = project.start_session(HOST)
    project.prompt(HOST, "hello")  # the hook heartbeat, so the hook listens too
    follow = Follow(project, session_id)
    wait_for(lambda: follow_records(session_id))
    return session_id, follow


def test_a_running_follower_is_reported_for_its_session(
    clocked_project: Project, run_cli: Run
) -> None:
    project = clocked_project
    code, report = doctor(run_cli)
    assert follow_row(report)["configured"] is False
    assert check(report, "transport:follow")["status"] == "skip"

    session_id, follow = running_follower(project)
    try:
        code, report = doctor(run_cli)
        assert code == 0, report
        row = follow_row(report)
        assert row["configured"] and row["running"] and row["healthy"], row
        assert row["boundTo"]["sessionId"] == session_id
        assert row["boundTo"]["workspacePath"] == project.ws
        assert row["boundTo"]["socketPath"] == project.daemon.socket
        assert row["problems"] == []
        assert check(report, "transport:follow")["status"] == "pass"
        # Additive: the listening method stays the spec's hook/channel answer.
        assert report["deliveryWillReachThisSession"] == "hook"

        text = run_cli("doctor").out
        assert f"  follow: healthy (session {session_id}, bound to {project.ws})" in text
        assert "✓ transport:follow: running" in text
    finally:
        follow.stop()


def test_a_follower_that_died_is_stale_with_the_command_to_restart_it(
    clocked_project: Project, run_cli: Run
) -> None:
    project = clocked_project
    session_id, follow = running_follower(project)
    pid = follow.process.pid
    follow.process.send_signal(signal.SIGKILL)  # no chance to remove its record
    follow.process.wait(timeout=15)
    follow.stop()
    # Its record as the registry holds it a minute later (the lifetime is 30 s).
    age_record("follow", f"{session_id}-{pid}", "2026-01-01T00:00:00.000Z", 1_767_225_600)

    code, report = doctor(run_cli)
    assert code == 1
    row = follow_row(report)
    assert row["configured"] and not row["running"] and not row["healthy"]
    stale = problems(report, "follow")["heartbeat-stale"]
    assert stale["detail"].startswith(f"{session_id}: the follow heartbeat was last written at")
    assert (
        f"agentmonitors events follow --session {session_id} --socket {project.daemon.socket}"
        in stale["remediation"]
    )
    assert check(report, "transport:follow")["status"] == "fail"
    # The hooks still deliver.
    assert report["deliverable"] is True
    assert report["deliveryWillReachThisSession"] == "hook"


def test_an_unknown_live_value_is_an_advisory_naming_the_file(
    clocked_project: Project, run_cli: Run
) -> None:
    project = clocked_project
    set_live(project, "sometimes")
    project.start_session(HOST)
    code, report = doctor(run_cli)
    assert code == 0, report
    found = problems(report, "follow")["live-setting-invalid"]
    path = enable_file_path(project.ws)
    assert found["detail"].startswith(f"{path}: live: 'sometimes' is neither on nor off")
    assert found["remediation"] == f"write `live: on` or `live: off` in {path}"

    set_live(project, "off")  # the last line wins, as in YAML
    _code, report = doctor(run_cli)
    assert "live-setting-invalid" not in problems(report, "follow")


def test_doctor_shows_the_wake_setting_and_names_an_unknown_value(
    clocked_project: Project, run_cli: Run
) -> None:
    project = clocked_project
    project.start_session(HOST)
    _code, report = doctor(run_cli)
    enabled = check(report, "project-enabled")
    assert enabled["detail"].endswith("; every change wakes an idle session (wake: all)")
    assert "wake-setting-invalid" not in problems(report, "follow")

    set_wake(project, "high")
    text = run_cli("doctor").out
    assert "only high-urgency changes wake an idle session (wake: high)" in text

    set_wake(project, "sometimes")
    code, report = doctor(run_cli)
    assert code == 0, report  # advisory: every change still wakes the session
    found = problems(report, "follow")["wake-setting-invalid"]
    path = enable_file_path(project.ws)
    assert found["detail"] == (
        f"{path}: wake: 'sometimes' is neither all nor high, so every change wakes an idle"
        " session (the default)"
    )
    assert found["remediation"] == f"write `wake: all` or `wake: high` in {path}"
    assert "wake: 'sometimes' is not understood" in check(report, "project-enabled")["detail"]


def test_the_plugins_follower_is_reported_per_session_and_its_death_says_hooks_deliver(
    clocked_project: Project, run_cli: Run
) -> None:
    project = clocked_project
    host = "3c1d-plugin-host"
    follower = Running(project, env={"CLAUDE_CODE_SESSION_ID": host})
    try:
        session_id = project.start_session(host)
        wait_for(lambda: follow_records(session_id))
        code, report = doctor(run_cli)
        assert code == 0, report
        row = follow_row(report)
        assert row["healthy"] and row["boundTo"]["hostSessionId"] == host
        text = run_cli("doctor").out
        assert (
            f"  follow: healthy (plugin monitor of Claude Code session {host}: session"
            f" {session_id}, bound to {project.ws})"
        ) in text
        pid = follower.process.pid
        follower.process.send_signal(signal.SIGKILL)
        follower.process.wait(timeout=15)
    finally:
        follower.stop()
    age_record("follow", f"{session_id}-{pid}", "2026-01-01T00:00:00.000Z", 1_767_225_600)
    _code, report = doctor(run_cli)
    stale = problems(report, "follow")["heartbeat-stale"]
    assert stale["detail"].startswith(f"{session_id}: ")
    assert "Claude Code never restarts it: the hooks still deliver" in stale["remediation"]
    assert report["deliverable"] is True
