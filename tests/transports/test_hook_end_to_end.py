"""Claude Code's hook payloads on stdin, through real processes and a real daemon."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.daemon.client import call, ping
from agentmonitors.workspace import read_local_state
from tests.conftest import CliResult
from tests.waiting import wait_for

pytestmark = pytest.mark.slow

Run = Callable[..., CliResult]

NOTES = """---
watch:
  type: file-fingerprint
  globs: "notes/*.txt"
urgency: {urgency}
---
Read the changed note.
"""


def hook(
    command: list[str], payload: Any, *, env: dict[str, str] | None = None
) -> tuple[int, str, str]:
    stdin = payload if isinstance(payload, (str, bytes)) else json.dumps(payload)
    done = subprocess.run(
        [sys.executable, "-m", "agentmonitors", *command],
        input=stdin.encode() if isinstance(stdin, str) else stdin,
        capture_output=True,
        timeout=60,
        check=False,
        env=env,
    )
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def deliver(payload: Any, *extra: str) -> tuple[int, str, str]:
    return hook(["hook", "deliver", *extra], payload)


class Project:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.ws = str(root)

    def payload(self, event: str, session: str = "host-1", **extra: Any) -> dict[str, Any]:
        return {"session_id": session, "hook_event_name": event, "cwd": self.ws, **extra}

    @property
    def socket(self) -> str:
        socket = read_local_state(self.ws).socket
        assert socket is not None
        return socket

    def start_session(self, session: str = "host-1") -> tuple[str, str]:
        code, out, err = hook(["session", "start"], self.payload("SessionStart", session))
        assert code == 0, err
        return out, err

    def session_id(self, host: str = "host-1") -> str:
        sessions = call(self.socket, "session.list", {})
        return next(item["id"] for item in sessions if item["hostSessionId"] == host)

    def events(self) -> list[dict[str, Any]]:
        return list(call(self.socket, "events.list", {"sessionId": self.session_id()}))

    def change(self, name: str = "a.txt", text: str = "changed\n") -> None:
        before = len(self.events())
        (self.root / "notes" / name).write_text(text)
        wait_for(lambda: len(self.events()) > before)


def make_project(root: Path, run_cli: Run, urgency: str = "normal") -> Project:
    assert run_cli("init", "--enable-only").code == 0
    folder = root / ".claude" / "monitors" / "notes"
    folder.mkdir(parents=True)
    (folder / "MONITOR.md").write_text(NOTES.format(urgency=urgency))
    (root / "notes").mkdir()
    (root / "notes" / "a.txt").write_text("first\n")
    return Project(root)


@pytest.fixture
def project(isolated_environment: Path, run_cli: Run) -> Iterator[Project]:
    proj = make_project(isolated_environment, run_cli)
    yield proj
    socket = read_local_state(proj.ws).socket
    if socket and ping(socket):
        call(socket, "stop", {})


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("stdin", "stderr_start"),
    [
        (b"", "hook deliver: no session_id in the stdin payload"),
        (b"not json", "hook deliver: no session_id in the stdin payload"),
        (b"[1, 2]", "hook deliver: no session_id in the stdin payload"),
        (
            b'{"session_id": 7, "hook_event_name": "UserPromptSubmit"}',
            "hook deliver: no session_id",
        ),
        (
            json.dumps({"session_id": "x" * 5000, "hook_event_name": "UserPromptSubmit"}).encode(),
            "hook deliver: no session_id",
        ),
        (
            b'{"session_id": "s", "hook_event_name": "PreToolUse"}',
            'hook deliver: hook_event_name "PreToolUse" does not map to a delivery lifecycle',
        ),
        (
            b'{"session_id": "s"}',
            "hook deliver: hook_event_name (none) does not map to a delivery lifecycle",
        ),
    ],
)
def test_malformed_payloads_print_nothing_and_exit_0(
    isolated_environment: Path, stdin: bytes, stderr_start: str
) -> None:
    # Bad input says nothing on either stream; --debug names the reason.
    assert deliver(stdin) == (0, "", "")
    code, out, err = deliver(stdin, "--debug")
    assert (code, out) == (0, "")
    assert stderr_start.removeprefix("hook deliver: ") in err


def test_not_enabled_is_silent_on_both_streams(isolated_environment: Path) -> None:
    payload = {
        "session_id": "s",
        "hook_event_name": "UserPromptSubmit",
        "cwd": str(isolated_environment),
    }
    assert deliver(payload) == (0, "", "")


def test_enabled_without_socket_refuses_shared_socket(
    isolated_environment: Path, run_cli: Run
) -> None:
    run_cli("init", "--enable-only")
    payload = {
        "session_id": "s",
        "hook_event_name": "UserPromptSubmit",
        "cwd": str(isolated_environment),
    }
    code, out, err = deliver(payload)
    assert (code, out) == (0, "")
    assert err.startswith("hook deliver: no per-workspace socket configured (neither --socket")
    enable = isolated_environment / ".claude" / "agentmonitors.local.md"
    enable.write_text("---\nenabled: true\nlast-boot-failure-at: 2026-01-01T00:00:00.000Z\n---\n")
    code, out, err = deliver(payload)
    assert err.startswith(
        "hook deliver: no per-workspace socket configured — the last automatic daemon boot"
    )


def test_unreachable_daemon_is_silent(isolated_environment: Path, run_cli: Run) -> None:
    run_cli("init", "--enable-only")
    # A socket of ours (in the data folder) that nobody listens on.
    unanswered = os.path.join(os.environ["XDG_DATA_HOME"], "agentmonitors", "nobody.sock")
    (isolated_environment / ".claude" / "agentmonitors.local.md").write_text(
        f"---\nenabled: true\nsocket: {unanswered}\n---\n"
    )
    payload = {
        "session_id": "s",
        "hook_event_name": "UserPromptSubmit",
        "cwd": str(isolated_environment),
    }
    assert deliver(payload) == (0, "", "")


def test_unknown_host_session_and_control_characters(project: Project) -> None:
    project.start_session()
    code, out, err = deliver(project.payload("UserPromptSubmit", session="evil\u2028\x1b[31m"))
    assert (code, out) == (0, "")
    assert err.strip() == (
        'hook deliver: no session registered for host session id "evil\\u2028\\u001b[31m"'
    )


def test_session_start_outside_enabled_workspace(isolated_environment: Path) -> None:
    payload = {
        "session_id": "s",
        "hook_event_name": "SessionStart",
        "cwd": str(isolated_environment),
    }
    assert hook(["session", "start"], payload) == (0, "", "")
    folder = isolated_environment / ".claude" / "monitors" / "docs"
    folder.mkdir(parents=True)
    (folder / "MONITOR.md").write_text("---\nwatch: {type: file-fingerprint, globs: x}\n---\n")
    code, out, err = hook(["session", "start"], payload)
    assert (code, err) == (0, "")
    body = json.loads(out)
    assert body["continue"] is True
    assert body["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert body["hookSpecificOutput"]["additionalContext"].startswith(
        "AgentMon: monitoring is disabled for this project (1 monitor definition found"
    )
    assert not (isolated_environment / ".claude" / "agentmonitors.local.md").exists()


# --------------------------------------------------------------------------- the real flow


def test_session_start_boots_registers_and_the_reminder_fires_once(project: Project) -> None:
    out, err = project.start_session()
    # Nothing unread yet: no recap, only the live-updates offer.
    offer = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert offer.startswith("AgentMon: live updates are available") and "\n" not in offer
    state = read_local_state(project.ws)
    assert state.socket is not None and state.db is not None
    session_id = project.session_id()
    assert err.strip() == f"AgentMon: session {session_id} registered; daemon at {state.socket}"

    project.change()
    code, out, err = deliver(project.payload("UserPromptSubmit", prompt="hi"))
    assert (code, err) == (0, "")
    assert "\n" not in out
    body = json.loads(out)
    assert body["continue"] is True
    assert body["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    context = body["hookSpecificOutput"]["additionalContext"]
    assert context.startswith(
        "AgentMon: Monitored changes are pending. Run `agentmonitors events list"
    )
    assert f"--session {session_id}" in context
    assert f"events ack --session {session_id}" in context

    # Coalesced until acknowledged: a second prompt, a tool call, a new change: silence.
    assert deliver(project.payload("UserPromptSubmit")) == (0, "", "")
    assert deliver(project.payload("PostToolUse", tool_name="Bash")) == (0, "", "")
    project.change(text="again\n")
    assert deliver(project.payload("PostToolUse")) == (0, "", "")
    states = {event["deliveryState"] for event in project.events()}
    assert states == {"claimed", "unread"}

    # Acknowledging brings the reminder back for the next change.
    ack = subprocess.run(
        [
            sys.executable,
            "-m",
            "agentmonitors",
            "events",
            "ack",
            "--session",
            session_id,
            "--socket",
            project.socket,
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (ack.returncode, ack.stdout.strip()) == (0, "Acknowledged 2 events.")
    assert {event["deliveryState"] for event in project.events()} == {"acknowledged"}
    project.change(text="third\n")
    code, out, _ = deliver(project.payload("PostToolUse"))
    assert json.loads(out)["hookSpecificOutput"]["hookEventName"] == "PostToolUse"


def test_debug_leaves_stdout_byte_identical(project: Project, run_cli: Run) -> None:
    project.start_session()
    project.change()
    plain = deliver(project.payload("UserPromptSubmit"), "--debug")
    assert plain[1] != ""
    assert "agentmonitors hook deliver --debug: payload" in plain[2]
    project.change(text="x\n")
    # Same state again for a fair comparison: acknowledge, change, deliver without debug.
    session_id = project.session_id()
    call(project.socket, "events.ack", {"sessionId": session_id})
    project.change(text="y\n")
    quiet = deliver(project.payload("UserPromptSubmit"))
    assert quiet[1] == plain[1]
    assert quiet[2] == ""
    held = deliver(project.payload("UserPromptSubmit"), "--debug")
    assert held[1] == ""
    assert "coalesced-until-ack" in held[2]


def test_text_format_prints_only_the_context(project: Project) -> None:
    project.start_session()
    project.change()
    _, out, _ = deliver(project.payload("UserPromptSubmit"), "--format", "text")
    assert out.startswith("AgentMon: Monitored changes are pending.")


def test_resume_recap_shows_events_in_full_with_their_ack_line(project: Project) -> None:
    project.start_session()
    project.change(text="recap me\n")
    out, _ = project.start_session()  # SessionStart again: resume or compact
    body = json.loads(out)
    offer, _, context = body["hookSpecificOutput"]["additionalContext"].partition("\n\n")
    assert offer.startswith("AgentMon: live updates are available")
    session_id = project.session_id()
    (event,) = project.events()
    assert context.startswith(
        "AgentMon: monitored changes are pending — consider handling them before continuing.\n"
        f"When handled, acknowledge: agentmonitors events ack --session {session_id} --socket "
    )
    # The baseline kept the file's text, so the first change after it carries its diff.
    assert context.rstrip().endswith(
        f"File changed: {project.root}/notes/a.txt\n\nRead the changed note.\n\n"
        "Changes:\n- 1: first\n+ 1: recap me"
    )
    assert f"--event-ids {event['id']}" in context
    assert "### notes (normal)" in context
    assert event["deliveryState"] == "claimed"


def test_stop_hook_never_loops_and_session_end_closes(project: Project) -> None:
    project.start_session()
    project.change()
    assert deliver(project.payload("Stop", stop_hook_active=True)) == (0, "", "")
    # Stop maps to turn-idle, which carries low reminders only; a normal event waits.
    assert deliver(project.payload("Stop", stop_hook_active=False)) == (0, "", "")
    code, out, err = hook(["session", "end"], project.payload("SessionEnd"))
    assert (code, out) == (0, "")
    assert err.strip() == f"AgentMon: session {project.session_id()} ended"
    (record,) = call(project.socket, "session.list", {})
    assert record["status"] == "dormant"


def test_low_reminder_surfaces_at_stop(isolated_environment: Path, run_cli: Run) -> None:
    project = make_project(isolated_environment, run_cli, urgency="low")
    try:
        project.start_session()
        project.change()
        assert deliver(project.payload("UserPromptSubmit")) == (0, "", "")
        _, out, _ = deliver(project.payload("Stop", stop_hook_active=False))
        body = json.loads(out)
        assert body["hookSpecificOutput"]["hookEventName"] == "Stop"
        assert body["hookSpecificOutput"]["additionalContext"].startswith(
            "AgentMon: Monitored changes are pending."
        )
    finally:
        call(project.socket, "stop", {})


def test_subagent_sessions_and_late_sessions_receive_nothing(
    project: Project, run_cli: Run
) -> None:
    project.start_session()
    opened = run_cli(
        "session",
        "open",
        "--host-session-id",
        "sub-1",
        "--role",
        "subagent",
        "--workspace",
        project.ws,
        "--format",
        "id",
    )
    assert opened.code == 0
    sub_id = opened.out.strip()
    project.change()
    late = run_cli(
        "session",
        "open",
        "--host-session-id",
        "late",
        "--workspace",
        project.ws,
        "--format",
        "json",
    ).json()
    assert call(project.socket, "events.list", {"sessionId": sub_id}) == []
    listed = run_cli("events", "list", "--session", late["id"], "--unread", "--format", "json")
    assert listed.json() == []
    assert len(project.events()) == 1


def test_events_ack_unknown_session_or_id_names_session_list(
    project: Project, run_cli: Run
) -> None:
    project.start_session()
    project.change()
    missing = run_cli("events", "ack", "--session", "NOPE", "--socket", project.socket)
    assert missing.code == 1
    assert "Session not found: NOPE" in missing.err
    assert "agentmonitors session list" in missing.err
    session_id = project.session_id()
    (event,) = project.events()
    bogus = run_cli(
        "events",
        "ack",
        "--session",
        session_id,
        "--socket",
        project.socket,
        "--event-ids",
        f" {event['id']} ,,bogus",
    )
    assert bogus.code == 1
    assert "bogus" in bogus.err and "agentmonitors session list" in bogus.err
    assert project.events()[0]["deliveryState"] == "acknowledged"
    empty = run_cli(
        "events", "ack", "--session", session_id, "--socket", project.socket, "--event-ids", ""
    )
    assert (empty.code, empty.out.strip()) == (0, "Acknowledged 0 events.")
    text = run_cli(
        "events", "list", "--session", session_id, "--socket", project.socket, "--format", "text"
    )
    header, line = text.out.strip().splitlines()
    assert header.split() == ["ID", "Monitor", "Urgency", "State", "Title"]
    assert line.split()[:5] == [event["id"], "notes", "normal", "acknowledged", "File"]
    assert "File changed: " in line


def test_daemon_killed_between_reserve_and_commit_redelivers(project: Project) -> None:
    project.start_session()
    project.change()
    session_id = project.session_id()
    reservation = call(
        project.socket, "hook.reserve", {"sessionId": session_id, "lifecycle": "turn-interruptible"}
    )
    assert reservation is not None
    pid = call(project.socket, "status", {})["pid"]
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not ping(project.socket))
    # The next SessionStart boots a new daemon; the lease died with the old one, so
    # the row is pending again and the recap shows it: nothing was lost.
    out, _ = project.start_session()
    assert "### notes (normal)" in json.loads(out)["hookSpecificOutput"]["additionalContext"]


def test_a_failed_stdout_write_releases_so_the_next_hook_delivers(project: Project) -> None:
    project.start_session()
    project.change()
    payload = json.dumps(project.payload("UserPromptSubmit"))
    # stdout closed: the write fails, so the reservation must be released at once
    # (not left to lapse after 30 s) and nothing claimed.
    done = subprocess.run(
        ["sh", "-c", f'"{sys.executable}" -m agentmonitors hook deliver >&-'],
        input=payload,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0
    assert {event["deliveryState"] for event in project.events()} == {"unread"}
    _, out, _ = deliver(project.payload("UserPromptSubmit"))
    assert (
        "Monitored changes are pending."
        in json.loads(out)["hookSpecificOutput"]["additionalContext"]
    )


def test_hook_claim_prints_the_raw_delivery_claim(project: Project, run_cli: Run) -> None:
    project.start_session()
    session_id = project.session_id()
    args = ("hook", "claim", "--session", session_id, "--socket", project.socket)
    nothing = run_cli(*args, "--lifecycle", "turn-interruptible")
    assert (nothing.code, nothing.out.strip()) == (0, "null")
    text = run_cli(*args, "--lifecycle", "turn-interruptible", "--format", "text")
    assert text.out.strip() == "No pending delivery."
    project.change()
    claim = run_cli(*args, "--lifecycle", "post-compact").json()
    assert claim["sessionId"] == session_id
    assert claim["mode"] == "recap"
    assert "urgency" not in claim
    assert claim["unreadCounts"] == {"low": 0, "normal": 1, "high": 0, "total": 1}
    assert [event["monitorId"] for event in claim["events"]] == ["notes"]
    assert claim["message"].startswith("Recap of recent AgentMon activity since your last recap:")
    # Claimed, never acknowledged.
    assert project.events()[0]["deliveryState"] == "claimed"
