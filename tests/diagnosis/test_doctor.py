"""``agentmonitors doctor``: its checks in order, its JSON and text, exit codes, and that
it changes nothing, with the daemon up (``doctor.report`` over the socket) and down
(the database read in-process)."""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.daemon.client import call
from agentmonitors.delivery.heartbeats import transports_dir
from agentmonitors.paths import resolve_db_path, resolve_socket_path
from tests.conftest import CliResult
from tests.transports.clocked_project import Project
from tests.transports.test_old_daemon import old_daemon

Run = Callable[..., CliResult]
__all__ = ["old_daemon"]  # a fixture, used by name

TOP_KEYS = [
    "ok",
    "generatedAt",
    "workspace",
    "monitorsDir",
    "daemon",
    "leadSession",
    "transports",
    "pipelineProblems",
    "deliveryWillReachThisSession",
    "deliverable",
    "verdict",
    "remediation",
    "checks",
    "monitors",
    "summary",
]
MONITOR_KEYS = {
    "id",
    "sourceType",
    "urgency",
    "valid",
    "validationError",
    "lastObservedAt",
    "neverObserved",
    "nextDueAt",
    "cadence",
    "lastEventAt",
    "delivery",
}
TRANSPORT_KEYS = {
    "name",
    "configured",
    "running",
    "healthy",
    "boundTo",
    "version",
    "lastDelivery",
    "problems",
}
BASE_ORDER = [
    "project-enabled",
    "monitors-directory",
    "monitors-valid",
    "daemon-reachable",
    "lead-session",
    "hook-command",
    "database",
]
TAIL_ORDER = [
    "transport:hook",
    "transport:channel",
    "transport:follow",
    "transport:codex-queue",
    "delivery-verdict",
]


def doctor(run_cli: Run, *args: str) -> tuple[int, dict[str, Any]]:
    result = run_cli("doctor", "--format", "json", *args)
    return result.code, json.loads(result.out)


def checks(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {check["name"]: check for check in report["checks"]}


def assert_shape(report: dict[str, Any], monitor_ids: list[str]) -> None:
    assert [key for key in TOP_KEYS if key in report] == TOP_KEYS
    assert set(report["daemon"]) == {"running", "socketPath"}
    assert [row["name"] for row in report["transports"]] == [
        "hook",
        "channel",
        "follow",
        "codex-queue",
    ]
    for row in report["transports"]:
        assert set(row) >= TRANSPORT_KEYS
    names = [check["name"] for check in report["checks"]]
    base = list(BASE_ORDER)
    if report["daemon"]["running"]:  # a running daemon says how file changes reach it
        base.insert(base.index("daemon-reachable") + 1, "file-events")
    assert names == base + [f"monitor:{name}" for name in monitor_ids] + TAIL_ORDER
    for check in report["checks"]:
        assert set(check) == {"name", "status", "detail", "remediation"}
        assert check["status"] in {"pass", "fail", "skip", "idle"}
        if check["status"] in {"fail", "idle"}:
            assert check["remediation"], check
    for row in report["monitors"]:
        assert set(row) >= MONITOR_KEYS
        assert set(row["delivery"]) == {"unread", "claimed", "acknowledged"}
    statuses = [check["status"] for check in report["checks"]]
    assert report["summary"] == {
        "passed": statuses.count("pass"),
        "failed": statuses.count("fail"),
        "skipped": statuses.count("skip"),
        "idle": statuses.count("idle"),
    }
    assert report["ok"] is (statuses.count("fail") == 0)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", report["generatedAt"])


def test_a_bare_folder_fails_enablement_and_exits_1(
    run_cli: Run, isolated_environment: Path
) -> None:
    code, report = doctor(run_cli)
    assert code == 1
    assert_shape(report, [])
    found = checks(report)
    assert found["project-enabled"]["status"] == "fail"
    assert found["project-enabled"]["remediation"].startswith("agentmonitors init --enable-only")
    # No monitors folder yet is information, not a failure (nothing is watched yet).
    assert found["monitors-directory"]["status"] == "idle"
    assert found["monitors-valid"]["status"] == "skip"
    # No daemon and no lead: nothing is expected to run yet, so these are idle.
    assert found["daemon-reachable"]["status"] == "idle"
    assert found["lead-session"]["status"] == "idle"
    assert str(isolated_environment) in found["lead-session"]["detail"]
    assert "agentmonitors session start" in found["lead-session"]["remediation"]
    assert report["daemon"]["running"] is False
    assert report["deliveryWillReachThisSession"] == "none"
    assert [p["code"] for p in report["pipelineProblems"]] == ["daemon-unreachable"]


def test_an_enabled_project_without_a_daemon_or_session_passes_with_idle_checks(
    run_cli: Run, isolated_environment: Path
) -> None:
    assert run_cli("init", "--enable-only").code == 0
    assert run_cli("init", "notes", "--yes", "--type", "file-fingerprint").code == 0
    code, report = doctor(run_cli)
    assert code == 0, report
    assert_shape(report, ["notes"])
    found = checks(report)
    assert found["project-enabled"]["status"] == "pass"
    assert found["monitors-valid"]["status"] == "pass"
    monitor = found["monitor:notes"]
    # The scaffold's glob matches nothing in an empty project: named as such.
    assert monitor["status"] == "idle"
    assert "match no file" in monitor["detail"]
    [row] = report["monitors"]
    assert row["neverObserved"] is True and row["valid"] is True
    assert row["sourceType"] == "file-fingerprint"
    assert row["cadence"] == "every 30s"
    # Nothing was created by looking: no database, no heartbeat registry.
    assert not os.path.exists(resolve_db_path(str(isolated_environment)))
    assert not os.path.exists(transports_dir())


def test_an_invalid_monitor_fails_its_check_and_monitors_valid(
    run_cli: Run, isolated_environment: Path
) -> None:
    assert run_cli("init", "--enable-only").code == 0
    folder = isolated_environment / ".claude" / "monitors" / "broken"
    folder.mkdir(parents=True)
    (folder / "MONITOR.md").write_text("---\nwatch:\n  type: nope\n---\nx\n")
    code, report = doctor(run_cli)
    assert code == 1
    found = checks(report)
    assert found["monitors-valid"]["status"] == "fail"
    assert found["monitor:broken"]["status"] == "fail"
    assert "MONITOR.md" in found["monitor:broken"]["remediation"]
    [row] = report["monitors"]
    assert row["valid"] is False and row["validationError"]


def tree_state(*folders: str) -> dict[str, tuple[int, int, str]]:
    """Every file under ``folders``: (size, mtime ns, sha256) by path."""
    state: dict[str, tuple[int, int, str]] = {}
    for folder in folders:
        for base, _dirs, files in os.walk(folder):
            for name in files:
                path = os.path.join(base, name)
                info = os.stat(path)
                digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
                state[path] = (info.st_size, info.st_mtime_ns, digest)
    return state


@pytest.mark.slow
def test_daemon_up_answers_doctor_report_and_a_prompted_session_is_deliverable(
    clocked_project: Project, run_cli: Run
) -> None:
    project = clocked_project
    session = project.start_session("host-doc")
    project.prompt("host-doc", "hello")
    event = project.settled_change()
    out, _ = project.prompt("host-doc", "go on")
    assert "notes/a.txt" in out

    # Served by the daemon under that name.
    direct = call(
        project.daemon.socket,
        "doctor.report",
        {"monitorsDir": str(project.root / ".claude" / "monitors"), "workspacePath": project.ws},
    )
    assert direct["daemon"]["running"] is True

    code, report = doctor(run_cli)
    assert code == 0, report
    assert_shape(report, ["notes"])
    assert report["daemon"] == {"running": True, "socketPath": project.daemon.socket}
    assert report["leadSession"]["sessionId"] == session
    assert report["deliveryWillReachThisSession"] == "hook"
    assert report["deliverable"] is True
    assert report["pipelineProblems"] == []
    hook, channel, _follow, _codex_queue = report["transports"]
    assert hook["configured"] and hook["running"] and hook["healthy"]
    assert hook["boundTo"]["workspacePath"] == project.ws
    assert hook["boundTo"]["hostSessionId"] == "host-doc"
    assert hook["lastDelivery"] is not None
    assert channel["configured"] is False
    found = checks(report)
    assert found["file-events"]["status"] == "pass"
    assert "event-driven" in found["file-events"]["detail"]
    assert found["monitor:notes"]["status"] == "pass"
    assert found["transport:channel"]["status"] == "skip"
    assert found["delivery-verdict"]["status"] == "pass"
    [row] = report["monitors"]
    assert row["neverObserved"] is False
    assert row["lastEventAt"] is not None
    assert row["delivery"] == {"unread": 0, "claimed": 1, "acknowledged": 0}
    # The monitor's lines: last observation, next due, last event and its state.
    assert row["lines"][0].startswith("last observation: ")
    assert row["lines"][1].startswith("next due: ")
    assert row["lines"][2].startswith("last event: ") and "claimed in 1 session" in row["lines"][2]
    assert event


@pytest.mark.slow
def test_daemon_down_reads_the_database_and_changes_nothing(
    clocked_project: Project, run_cli: Run
) -> None:
    project = clocked_project
    project.start_session("host-down")
    project.prompt("host-down", "hello")
    project.daemon.stop()
    db_dir = os.path.dirname(resolve_db_path(project.ws))
    before = tree_state(db_dir, transports_dir())
    listing = sorted(os.listdir(db_dir)), sorted(os.listdir(transports_dir()))

    code, report = doctor(run_cli)
    assert code == 1
    assert_shape(report, ["notes"])
    found = checks(report)
    # An active lead expects the daemon: fail, not idle.
    assert found["daemon-reachable"]["status"] == "fail"
    assert found["lead-session"]["status"] == "pass"
    assert found["monitor:notes"]["status"] == "pass"  # observed, read from the database
    assert [p["code"] for p in report["pipelineProblems"]] == ["daemon-unreachable"]
    hook = report["transports"][0]
    assert "daemon-unreachable" in [p["code"] for p in hook["problems"]]
    assert found["transport:hook"]["status"] == "fail"
    assert found["delivery-verdict"]["status"] == "fail"
    assert report["deliverable"] is False

    text = run_cli("doctor")
    assert text.code == 1
    assert tree_state(db_dir, transports_dir()) == before
    assert (sorted(os.listdir(db_dir)), sorted(os.listdir(transports_dir()))) == listing


@pytest.mark.slow
def test_text_output_has_header_transports_glyphs_remediations_and_summary(
    clocked_project: Project, run_cli: Run
) -> None:
    project = clocked_project
    project.start_session("host-text")
    project.prompt("host-text", "hello")
    project.daemon.stop()
    result = run_cli("doctor")
    assert result.code == 1
    lines = result.out.splitlines()
    socket = resolve_socket_path(project.ws)
    assert lines[:3] == [
        f"Workspace: {project.ws}",
        f"Monitors: {project.root / '.claude' / 'monitors'}",
        f"Daemon: not running ({socket})",
    ]
    start = lines.index("Delivery transports:")
    block = lines[start : lines.index("", start)]
    assert block[1].startswith("  hook: ")
    assert any(line.startswith("  channel: ") for line in block)
    assert block[-1].startswith("  verdict: not deliverable now")
    assert "✓ project-enabled: enabled" in result.out
    assert "✗ daemon-reachable: no daemon answers at" in result.out
    assert "○ transport:channel:" in result.out
    failing = lines.index(next(line for line in lines if line.startswith("✗ daemon-reachable")))
    assert lines[failing + 1].startswith("  ↳ ")
    assert re.fullmatch(r"Summary: \d+ passed, \d+ failed, \d+ skipped, \d+ idle\.", lines[-1]), (
        lines[-1]
    )


def test_bad_format_is_a_usage_error(run_cli: Run) -> None:
    result = run_cli("doctor", "--format", "yaml")
    assert result.code == 2
    assert result.err.startswith("error: ")


def test_an_older_daemon_without_doctor_report_falls_back_in_process(
    old_daemon: tuple[str, list[str]], run_cli: Run
) -> None:
    path, methods = old_daemon
    assert run_cli("init", "--enable-only").code == 0
    code, report = doctor(run_cli, "--socket", path)
    assert methods == ["doctor.report"]
    failed = [check["name"] for check in report["checks"] if check["status"] == "fail"]
    assert (code, failed) == (0, [])
    assert report["daemon"] == {"running": False, "socketPath": path}
    reachable = checks(report)["daemon-reachable"]
    assert reachable["status"] == "idle"
    assert "predates this agentmonitors" in reachable["detail"]
    assert reachable["remediation"].startswith(f"agentmonitors daemon stop --socket {path}")
