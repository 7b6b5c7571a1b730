"""The Cursor adapter, driven by payloads built from Cursor's documented shapes.

No Cursor binary installs here, so the payloads are fixtures
(tests/fixtures/cursor/*.json); everything behind them is real: the CLI in a
subprocess, a real daemon on a real socket, a real SQLite file.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.daemon.client import call, ping
from agentmonitors.delivery.host_capabilities import UNREACHABLE
from agentmonitors.diagnosis.doctor_transports import Lead, host_checks
from agentmonitors.transports.hosts import HOSTS, adapter_for
from agentmonitors.transports.hosts.cursor import ADAPTER, LOOP_LIMIT
from agentmonitors.workspace import read_local_state
from tests.conftest import CliResult
from tests.transports.test_hook_end_to_end import Project, hook, make_project
from tests.waiting import wait_for

Run = Callable[..., CliResult]
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "cursor"
CONVERSATION = "c0a8e2f4-6b1d-4c3e-9f7a-2d5e8b1c4a90"


def fixture(event: str, root: str = "/path/to/project", **changes: Any) -> dict[str, Any]:
    payload: dict[str, Any] = json.loads((FIXTURES / f"{event}.json").read_text())
    payload["workspace_roots"] = [root]
    payload.update(changes)
    return payload


# ------------------------------------------------------------------- the payload, alone


def test_fixtures_normalise_to_session_turn_folder_and_event() -> None:
    for event in ("sessionStart", "stop", "postToolUse", "sessionEnd"):
        payload = ADAPTER.parse(json.dumps(fixture(event, "/work/p")))
        assert payload.session_id == CONVERSATION
        assert payload.hook_event_name == event
        assert payload.cwd == "/work/p"
        assert payload.turn_id is not None and payload.turn_id.startswith("g-")
    # Older builds send no session_id: the conversation id is the session either way.
    older = fixture("stop")
    del older["session_id"]
    assert ADAPTER.parse(json.dumps(older)).session_id == CONVERSATION


def test_the_stop_tries_what_a_tool_call_would_have_delivered_first() -> None:
    stop = ADAPTER.parse(json.dumps(fixture("stop")))
    assert ADAPTER.lifecycles(stop, None) == ("turn-interruptible", "turn-idle")
    assert ADAPTER.lifecycles(ADAPTER.parse(json.dumps(fixture("sessionStart"))), None) == (
        "post-compact",
    )
    # postToolUse context never reaches Cursor's model: no lifecycle there.
    assert ADAPTER.lifecycles(ADAPTER.parse(json.dumps(fixture("postToolUse"))), None) == ()


@pytest.mark.parametrize(
    ("changes", "guarded"),
    [
        ({"loop_count": LOOP_LIMIT - 1}, False),
        ({"loop_count": LOOP_LIMIT}, True),
        ({"loop_count": LOOP_LIMIT + 3}, True),
        ({"loop_count": True}, False),  # not a count
        ({"status": "aborted"}, True),
        ({"status": "error"}, True),
    ],
)
def test_the_stop_guard_is_loop_count_and_status(changes: dict[str, Any], guarded: bool) -> None:
    stop = ADAPTER.parse(json.dumps(fixture("stop", **changes)))
    assert stop.stop_guard is guarded
    assert (ADAPTER.lifecycles(stop, None) == ()) is guarded


def test_stray_bytes_before_the_json_are_skipped() -> None:
    raw = b"\xef\xbb\xbfshell banner\n" + json.dumps(fixture("stop")).encode()
    assert ADAPTER.parse(raw).session_id == CONVERSATION
    for bad in (b"", b"banner only", b"x{not json}", b"[1]", b'{"a": 1} trailing'):
        assert ADAPTER.parse(bad).session_id is None


def test_outputs_are_cursor_shapes_and_always_json() -> None:
    text = 'quotes " and \\ and \n newlines \u2028 and {"json": true}'
    assert json.loads(ADAPTER.output("sessionStart", text)) == {"additional_context": text}
    assert json.loads(ADAPTER.output("stop", text)) == {"followup_message": text}
    assert ADAPTER.nothing == "{}"


def test_every_host_says_what_it_cannot_reach_as_doctor_does() -> None:
    for host in HOSTS:
        try:
            adapter = adapter_for(host)
        except ModuleNotFoundError:  # an adapter still being written
            continue
        assert adapter.instead == UNREACHABLE[host], host
        assert adapter.reaches.isdisjoint(adapter.instead), host
    assert {point for point, _ in ADAPTER.unreachable()} == {"turn-interruptible", "post-compact"}


# ------------------------------------------------------- the hooks, with a real daemon


class CursorProject(Project):
    def session_id(self, host: str = CONVERSATION) -> str:
        return super().session_id(host)


def cursor_project(root: Path, run_cli: Run, urgency: str = "normal") -> CursorProject:
    return CursorProject(make_project(root, run_cli, urgency).root)


@pytest.fixture
def project(isolated_environment: Path, run_cli: Run) -> Iterator[CursorProject]:
    proj = cursor_project(isolated_environment, run_cli)
    yield proj
    socket = read_local_state(proj.ws).socket
    if socket and ping(socket):
        call(socket, "stop", {})


def cursor(command: list[str], payload: Any) -> tuple[int, str, str]:
    return hook([*command, "--host", "cursor"], payload)


def cursor_session(project: CursorProject) -> dict[str, Any]:
    sessions = call(project.socket, "session.list", {})
    return next(item for item in sessions if item["hostSessionId"] == CONVERSATION)


@pytest.mark.slow
def test_a_cursor_session_registers_gets_followups_at_stop_and_ends(project: CursorProject) -> None:
    code, out, err = cursor(["session", "start"], fixture("sessionStart", project.ws))
    assert (code, out) == (0, "{}"), err  # registered; nothing unread, so no context
    session = cursor_session(project)
    assert session["adapter"] == "cursor"
    assert session["workspacePath"] == project.ws

    project.change()
    # A tool call would have carried the reminder; Cursor would drop it, so nothing.
    code, out, err = cursor(["hook", "deliver"], fixture("postToolUse", project.ws))
    assert (code, out, err) == (0, "{}", "")
    debugged = hook(
        ["hook", "deliver", "--host", "cursor", "--debug"], fixture("postToolUse", project.ws)
    )
    assert "does not map to a delivery lifecycle (only stop and sessionStart do)" in debugged[2]

    code, out, err = cursor(["hook", "deliver"], fixture("stop", project.ws))
    assert (code, err) == (0, "")
    body = json.loads(out)
    assert list(body) == ["followup_message"]
    assert body["followup_message"].startswith("AgentMon: Monitored changes are pending.")
    assert f"--session {session['id']}" in body["followup_message"]

    # Claimed and coalesced until acknowledged: the next stop says nothing.
    assert cursor(["hook", "deliver"], fixture("stop", project.ws, loop_count=1)) == (0, "{}", "")
    project.change(text="again\n")
    # At the loop limit, or after an aborted turn, nothing, whatever is pending.
    call(project.socket, "events.ack", {"sessionId": session["id"]})
    project.change(text="third\n")
    for changes in ({"loop_count": LOOP_LIMIT}, {"status": "aborted"}):
        assert cursor(["hook", "deliver"], fixture("stop", project.ws, **changes))[1] == "{}"
    assert json.loads(cursor(["hook", "deliver"], fixture("stop", project.ws))[1])

    code, out, err = cursor(["session", "end"], fixture("sessionEnd", project.ws))
    assert (code, out) == (0, "{}")
    assert err.strip() == f"AgentMon: session {session['id']} ended"
    assert cursor_session(project)["status"] == "dormant"


@pytest.mark.slow
def test_a_resumed_cursor_session_gets_the_recap_as_additional_context(
    project: CursorProject,
) -> None:
    cursor(["session", "start"], fixture("sessionStart", project.ws))
    project.change(text="recap me\n")
    code, out, _ = cursor(["session", "start"], fixture("sessionStart", project.ws))
    assert code == 0
    context = json.loads(out)["additional_context"]
    assert context.startswith("AgentMon: monitored changes are pending")
    assert "### notes (normal)" in context


@pytest.mark.slow
def test_a_low_reminder_reaches_cursor_at_the_stop(
    isolated_environment: Path, run_cli: Run
) -> None:
    project = cursor_project(isolated_environment, run_cli, urgency="low")
    try:
        cursor(["session", "start"], fixture("sessionStart", project.ws))
        project.change()
        out = cursor(["hook", "deliver"], fixture("stop", project.ws))[1]
        assert json.loads(out)["followup_message"].startswith(
            "AgentMon: Monitored changes are pending."
        )
    finally:
        call(project.socket, "stop", {})


@pytest.mark.slow
def test_doctor_and_session_list_name_the_host(project: CursorProject) -> None:
    cursor(["session", "start"], fixture("sessionStart", project.ws))
    hook(["session", "start"], project.payload("SessionStart", "claude-1"))
    listed = subprocess.run(
        [sys.executable, "-m", "agentmonitors", "session", "list", "--socket", project.socket],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert listed[0].split()[:3] == ["ID", "Status", "Host"]
    hosts = {line.split()[2] for line in listed[1:]}
    assert hosts == {"cursor", "claude-code"}

    doctor = subprocess.run(
        [sys.executable, "-m", "agentmonitors", "doctor", "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
        cwd=project.ws,
    )
    checks = {check["name"]: check for check in json.loads(doctor.stdout)["checks"]}
    host = checks["host:cursor"]
    assert host["status"] == "pass"
    assert "turn-interruptible: Cursor shows no tool-call context" in host["detail"]
    assert "post-compact" in host["detail"]
    assert cursor_session(project)["id"] in host["detail"]
    assert "host:claude-code" not in checks  # Claude Code reaches every point


@pytest.mark.slow
def test_a_bad_host_is_a_usage_error() -> None:
    code, out, err = hook(["session", "start", "--host", "vscode"], {})
    assert (code, out) == (1, "")
    assert err.strip() == (
        "error: Invalid value for '--host': 'vscode' is not one of 'claude-code', 'codex', "
        "'cursor'."
    )
    code, out, err = hook(["hook", "deliver", "--host=vscode"], {})
    assert (code, out) == (0, "")
    assert err.startswith("error: Invalid value for '--host': 'vscode'")


@pytest.mark.slow
def test_claude_code_hooks_skip_stray_bytes_before_the_payload(project: CursorProject) -> None:
    """A shell profile that prints a banner before the hook's JSON costs no delivery."""
    hook(["session", "start"], project.payload("SessionStart", "claude-1"))
    before = len(call(project.socket, "events.list", {"sessionId": project.session_id("claude-1")}))
    (project.root / "notes" / "a.txt").write_text("changed\n")
    wait_for(
        lambda: (
            len(call(project.socket, "events.list", {"sessionId": project.session_id("claude-1")}))
            > before
        )
    )
    raw = (
        b"Welcome to the shell!\n"
        + json.dumps(project.payload("UserPromptSubmit", "claude-1")).encode()
    )
    code, out, err = hook(["hook", "deliver", "--host", "claude-code"], raw)
    assert (code, err) == (0, "")
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("AgentMon: Monitored changes are pending.")


def test_doctor_names_what_each_host_cannot_reach() -> None:
    leads = [
        Lead("S1", "h1", "claude-code"),
        Lead("S2", "h2", "codex"),
        Lead("S3", "h3", "cursor"),
        Lead("S4", "h4", "codex"),
    ]
    checks = {check["name"]: check for check in host_checks(leads)}
    assert set(checks) == {"host:codex", "host:cursor"}
    codex = checks["host:codex"]["detail"]
    assert codex.startswith("Codex session(s) S2, S4 cannot reach deregister: Codex has no")
    assert "idle for 30 minutes" in codex
    cursor_detail = checks["host:cursor"]["detail"]
    assert cursor_detail.startswith("Cursor session(s) S3 cannot reach turn-interruptible: ")
    assert all(check["status"] == "pass" for check in checks.values())
    assert host_checks([Lead("S1", "h1")]) == []  # a lead without a host is Claude Code's


@pytest.mark.slow
def test_session_open_registers_under_the_host_given(project: CursorProject, run_cli: Run) -> None:
    hook(["session", "start"], project.payload("SessionStart", "claude-1"))  # boots the daemon
    opened = run_cli(
        "session", "open", "--host-session-id", "conv-9", "--host", "cursor", "--socket",
        project.socket, "--format", "json",
    )  # fmt: skip
    assert opened.code == 0, opened.err
    assert opened.json()["adapter"] == "cursor"
    default = run_cli("session", "open", "--host-session-id", "c-2", "--socket", project.socket,
                      "--format", "json")  # fmt: skip
    assert default.json()["adapter"] == "claude-code"
