"""Every ``doctor`` problem code, produced for real: a real daemon, real sessions opened
by ``session start``, hook heartbeats written by real ``hook deliver`` processes, and
channel heartbeats written by the writer the channel server uses (then, where a case
needs it, altered in the registry as a misconfigured or old writer would leave them)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.delivery.heartbeats import (
    CHANNEL_TTL_MS,
    record_file_name,
    transports_dir,
    write_heartbeat,
)
from agentmonitors.diagnosis.doctor_transports import Lead, pipeline_problems
from agentmonitors.paths import resolve_socket_path
from tests.conftest import CliResult
from tests.transports.clocked_project import Project
from tests.transports.test_hook_debug import add_normal_monitor, normal_change

Run = Callable[..., CliResult]
pytestmark = pytest.mark.slow


def doctor(run_cli: Run) -> tuple[int, dict[str, Any]]:
    result = run_cli("doctor", "--format", "json")
    return result.code, json.loads(result.out)


def problems(report: dict[str, Any], transport: str) -> dict[str, dict[str, str]]:
    row = next(row for row in report["transports"] if row["name"] == transport)
    return {problem["code"]: problem for problem in row["problems"]}


def check(report: dict[str, Any], name: str) -> dict[str, Any]:
    return next(item for item in report["checks"] if item["name"] == name)


def channel_record(
    project: Project,
    host: str,
    *,
    workspace: str | None = None,
    socket: str | None = None,
    delivered: bool = False,
) -> None:
    """The record a ``channel serve`` bound to ``host`` writes."""
    write_heartbeat(
        "channel",
        host,
        workspace=workspace or project.ws,
        socket_path=socket or project.daemon.socket,
        host_session_id=host,
        ttl_ms=CHANNEL_TTL_MS,
        delivered=delivered,
    )


def edit_record(transport: str, key: str, **changes: Any) -> None:
    """Change fields of a written record, keeping its file time as the writer left it
    (a hook skips rewriting a record whose file is under a minute old)."""
    path = Path(transports_dir()) / record_file_name(transport, key)
    info = path.stat()
    record = json.loads(path.read_text())
    record.update(changes)
    path.write_text(json.dumps(record, indent=2))
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))


def age_record(transport: str, key: str, updated_at: str, epoch_s: int) -> None:
    """A record last written at ``updated_at`` (its file time too)."""
    edit_record(transport, key, updatedAt=updated_at)
    os.utime(Path(transports_dir()) / record_file_name(transport, key), (epoch_s, epoch_s))


def test_a_healthy_channel_that_never_delivered_is_advisory_only(
    clocked_project: Project, run_cli: Run
) -> None:
    project = clocked_project
    project.start_session("host-a")
    project.prompt("host-a", "hello")
    channel_record(project, "host-a")
    code, report = doctor(run_cli)
    assert code == 0, report
    found = problems(report, "channel")
    assert set(found) == {"channel-registration-unverified"}
    assert found["channel-registration-unverified"]["detail"].startswith("host-a: ")
    assert check(report, "transport:channel")["status"] == "pass"
    assert "advisory" in check(report, "transport:channel")["detail"]
    assert report["deliveryWillReachThisSession"] == "both"

    # Once it has delivered, the advisory is gone.
    channel_record(project, "host-a", delivered=True)
    _, report = doctor(run_cli)
    assert problems(report, "channel") == {}


def test_misbound_channels_are_named_workspace_socket_and_unmatched(
    clocked_project: Project, run_cli: Run, tmp_path: Path
) -> None:
    project = clocked_project
    project.start_session("host-b")
    project.prompt("host-b", "hello")
    elsewhere = tmp_path / "other-project"
    elsewhere.mkdir()
    # The lead's channel started in another project (matched by host session id
    # across workspaces) and talks to that project's daemon.
    channel_record(
        project,
        "host-b",
        workspace=str(elsewhere),
        socket=resolve_socket_path(str(elsewhere)),
        delivered=True,
    )
    # A channel in this workspace bound to a host session that is no lead here.
    channel_record(project, "ghost-session", delivered=True)
    code, report = doctor(run_cli)
    assert code == 1
    found = problems(report, "channel")
    assert {"workspace-mismatch", "socket-mismatch", "channel-session-unmatched"} <= set(found)
    assert str(elsewhere) in found["workspace-mismatch"]["detail"]
    assert project.ws in found["workspace-mismatch"]["remediation"]
    assert "AGENTMONITORS_SOCKET" in found["socket-mismatch"]["remediation"]
    assert "ghost-session" in found["channel-session-unmatched"]["detail"]
    assert check(report, "transport:channel")["status"] == "fail"
    # The hooks still deliver: the listening method is the hook alone.
    assert report["deliveryWillReachThisSession"] == "hook"


def test_a_lead_without_a_channel_or_a_hook_heartbeat_is_uncovered(
    clocked_project: Project, run_cli: Run
) -> None:
    project = clocked_project
    covered = project.start_session("host-c1")
    # A second lead registered by hand: no hook of it has ever run.
    opened = run_cli("session", "open", "--host-session-id", "host-c2", "--format", "json")
    assert opened.code == 0, opened.err
    uncovered = opened.json()["id"]
    channel_record(project, "host-c1", delivered=True)
    code, report = doctor(run_cli)
    assert code == 1
    channel = problems(report, "channel")
    hook = problems(report, "hook")
    assert set(channel) == {"channel-lead-uncovered"}
    assert uncovered in channel["channel-lead-uncovered"]["detail"]
    assert set(hook) == {"hook-lead-uncovered"}
    assert uncovered in hook["hook-lead-uncovered"]["detail"]
    assert covered not in hook["hook-lead-uncovered"]["detail"]
    # Word for word: both transports name the lead, its host and what is missing.
    assert channel["channel-lead-uncovered"] == {
        "code": "channel-lead-uncovered",
        "detail": f"active lead session {uncovered} (host host-c2) has no channel heartbeat",
        "remediation": "restart that Claude Code session with the channel server of the plugin"
        " loaded, or rely on its hooks",
    }
    assert hook["hook-lead-uncovered"] == {
        "code": "hook-lead-uncovered",
        "detail": f"active lead session {uncovered} (host host-c2) has no hook heartbeat: its"
        " hooks have not run `hook deliver` with this installation",
        "remediation": "send a prompt in that session; if this stays, reinstall the"
        " agentmonitors plugin (its hooks run `agentmonitors hook deliver`)",
    }
    assert check(report, "transport:hook")["status"] == "fail"

    project.prompt("host-c2", "hello")
    _, report = doctor(run_cli)
    assert problems(report, "hook") == {}


def test_stale_foreign_and_old_hook_heartbeats(clocked_project: Project, run_cli: Run) -> None:
    project = clocked_project
    project.start_session("host-d")
    project.prompt("host-d", "hello")

    age_record("hook", "host-d", "2020-01-01T00:00:00.000Z", 1_577_836_800)
    _, report = doctor(run_cli)
    found = problems(report, "hook")
    assert "heartbeat-stale" in found
    assert "2020-01-01T00:00:00.000Z" in found["heartbeat-stale"]["detail"]
    assert check(report, "transport:hook")["status"] == "fail"
    assert report["transports"][0]["running"] is False

    project.prompt("host-d", "hello again")  # a fresh write: healthy again
    _, report = doctor(run_cli)
    assert problems(report, "hook") == {}

    edit_record("hook", "host-d", home="/somewhere/else", version="0.0.1")
    code, report = doctor(run_cli)
    assert code == 1
    found = problems(report, "hook")
    assert set(found) == {"environment-mismatch", "version-skew"}
    assert "/somewhere/else" in found["environment-mismatch"]["detail"]
    assert "0.0.1" in found["version-skew"]["detail"]


def test_a_version_skew_alone_is_advisory(clocked_project: Project, run_cli: Run) -> None:
    project = clocked_project
    project.start_session("host-v")
    project.prompt("host-v", "hello")
    edit_record("hook", "host-v", version="0.0.1")
    code, report = doctor(run_cli)
    assert code == 0, report
    assert set(problems(report, "hook")) == {"version-skew"}
    assert check(report, "transport:hook")["status"] == "pass"
    assert report["deliverable"] is True


def test_suppressed_reminders_get_the_scoped_ack_command(
    clocked_project: Project, run_cli: Run
) -> None:
    project = clocked_project
    session = project.start_session("host-r")
    add_normal_monitor(project)
    first = normal_change(project, "a.txt", "one\n")
    out, _ = project.prompt("host-r", "go on")
    assert "Monitored changes are pending" in out

    code, report = doctor(run_cli)
    assert code == 1
    [problem] = report["pipelineProblems"]
    assert problem["code"] == "reminders-suppressed"
    assert problem["remediation"] == (
        f"agentmonitors events ack --session {session} --event-ids {first}"
        f" --socket {project.daemon.socket}"
    )
    # Pipeline-wide: every configured transport carries it.
    assert "reminders-suppressed" in problems(report, "hook")
    assert check(report, "delivery-verdict")["status"] == "fail"
    assert report["deliverable"] is False

    project.ipc("events.ack", {"sessionId": session, "eventIds": [first]})
    code, report = doctor(run_cli)
    assert code == 0, report
    assert report["pipelineProblems"] == []


def test_daemon_unreachable_is_pipeline_wide(clocked_project: Project, run_cli: Run) -> None:
    project = clocked_project
    project.start_session("host-u")
    project.prompt("host-u", "hello")
    channel_record(project, "host-u", delivered=True)
    project.daemon.stop()
    code, report = doctor(run_cli)
    assert code == 1
    assert [p["code"] for p in report["pipelineProblems"]] == ["daemon-unreachable"]
    assert "daemon-unreachable" in problems(report, "hook")
    assert "daemon-unreachable" in problems(report, "channel")
    assert report["daemon"]["running"] is False


@pytest.mark.parametrize(
    ("diagnosis", "expected"),
    [
        (RuntimeError("socket closed"), "hook.diagnose failed (socket closed)"),
        (
            {"holds": [{"urgency": "normal", "reason": "already-claimed", "message": "m"}]},
            "names no claimed event ids",
        ),
        (
            {
                "holds": [
                    {"urgency": "low", "reason": "coalesced-until-ack", "claimedEventIds": [1]}
                ]
            },
            "names no claimed event ids",
        ),
    ],
)
def test_an_unusable_diagnosis_is_unavailable_never_an_ack_all(
    diagnosis: Any, expected: str
) -> None:
    def diagnose(session_id: str, lifecycle: str) -> dict[str, Any]:
        if isinstance(diagnosis, Exception):
            raise diagnosis
        return dict(diagnosis) if lifecycle == "turn-interruptible" else {"holds": []}

    found = pipeline_problems(True, "/run/s.sock", [Lead("S1", "host")], diagnose)
    assert [problem["code"] for problem in found] == ["delivery-diagnosis-unavailable"]
    assert expected in found[0]["detail"]
    assert "events ack" not in found[0]["remediation"]
    assert "--session S1" in found[0]["remediation"]


def test_the_registry_is_read_not_reaped(clocked_project: Project, run_cli: Run) -> None:
    project = clocked_project
    project.start_session("host-s")
    project.prompt("host-s", "hello")
    channel_record(project, "gone-session")
    edit_record("channel", "gone-session", updatedAt="2020-01-01T00:00:00.000Z")
    names = sorted(os.listdir(transports_dir()))
    doctor(run_cli)
    assert sorted(os.listdir(transports_dir())) == names


def test_a_lead_no_transport_listens_for_is_not_deliverable(
    clocked_project: Project, run_cli: Run
) -> None:
    opened = run_cli("session", "open", "--host-session-id", "host-n", "--format", "json")
    assert opened.code == 0, opened.err
    code, report = doctor(run_cli)
    assert code == 1
    assert report["deliveryWillReachThisSession"] == "none"
    assert check(report, "transport:hook")["status"] == "skip"
    verdict = check(report, "delivery-verdict")
    assert verdict["status"] == "fail"
    assert "no transport listens" in verdict["detail"]

    # Its hook runs once (no `session start` persisted a socket, so it is named).
    clocked_project.prompt("host-n", "hello", "--socket", clocked_project.daemon.socket)
    code, report = doctor(run_cli)
    assert code == 0, report["transports"]
    assert report["deliveryWillReachThisSession"] == "hook"


def test_problems_of_every_matched_record_are_unioned_and_the_freshest_represents(
    clocked_project: Project, run_cli: Run
) -> None:
    project = clocked_project
    project.start_session("host-f")
    project.prompt("host-f", "hello")
    write_heartbeat(
        "channel",
        "pid-2",
        workspace=project.ws,
        socket_path=project.daemon.socket,
        host_session_id="host-f",
        ttl_ms=CHANNEL_TTL_MS,
        delivered=True,
    )
    write_heartbeat(
        "channel",
        "pid-1",
        workspace=project.ws,
        socket_path="/elsewhere/agentmonitors.sock",
        host_session_id="host-f",
        ttl_ms=CHANNEL_TTL_MS,
        delivered=True,
    )
    edit_record("channel", "pid-1", updatedAt="2999-01-01T00:00:00.000Z")  # corrupt: future
    _, report = doctor(run_cli)
    channel = report["transports"][1]
    assert channel["boundTo"]["socketPath"] == project.daemon.socket
    assert {"socket-mismatch", "heartbeat-stale"} <= {p["code"] for p in channel["problems"]}
