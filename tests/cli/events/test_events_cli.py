"""``events list`` and ``events ack`` against a real daemon: what they say and print."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import CliResult
from tests.transports.clocked_project import Project, Run

SESSION_HINT = "Run `agentmonitors session list` to find a session id."


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PWD": os.getcwd()}
    return subprocess.run(
        [sys.executable, "-m", "agentmonitors", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
    )


@pytest.mark.parametrize("command", ["list", "ack"])
def test_a_missing_session_names_the_option_and_where_to_find_one(
    run_cli: Run, command: str
) -> None:
    result: CliResult = run_cli("events", command)
    assert result.code == 2
    assert result.out == ""
    assert result.err == f"error: Missing option '--session'.\n{SESSION_HINT}\n"


@pytest.mark.parametrize("scope", ["filePath", "a=1,b", "=x", ""])
def test_a_malformed_scope_is_a_usage_error_naming_the_flag(run_cli: Run, scope: str) -> None:
    result = run_cli("events", "list", "--session", "s", "--scope", scope)
    assert result.code == 2
    assert result.out == ""
    first = result.err.splitlines()[0]
    assert first.startswith("error: Invalid value for '--scope': expected key=value pairs")


@pytest.mark.slow
def test_ack_says_how_many_it_acknowledged_in_text_and_json(clocked_project: Project) -> None:
    project = clocked_project
    session = project.start_session("host-ack")
    first = project.settled_change("one\n")
    second = project.settled_change("two\n")
    socket = ["--socket", project.daemon.socket]

    listed = cli("events", "list", "--session", session, "--format", "text", *socket)
    assert listed.returncode == 0, listed.stderr
    header, *lines = listed.stdout.splitlines()
    assert header.split() == ["ID", "Monitor", "Urgency", "State", "Title"]
    assert [line.split()[0] for line in lines] == [second, first]
    assert header.index("Monitor") == lines[0].index("notes")

    one = cli("events", "ack", "--session", session, "--event-ids", first, *socket)
    assert (one.returncode, one.stdout) == (0, "Acknowledged 1 event.\n")
    again = cli("events", "ack", "--session", session, "--event-ids", first, *socket)
    assert (again.returncode, again.stdout) == (0, "Acknowledged 0 events.\n")

    as_json = cli("events", "ack", "--session", session, "--format", "json", *socket)
    assert as_json.returncode == 0, as_json.stderr
    assert json.loads(as_json.stdout) == {"ok": True, "acknowledged": 1, "heldByDelivery": 0}

    unknown = cli("events", "ack", "--session", session, "--event-ids", "nope", "--format", "json")
    assert unknown.returncode == 1
    assert json.loads(unknown.stdout)["unknownEventIds"] == ["nope"]


@pytest.mark.slow
def test_ack_all_says_what_an_in_flight_delivery_keeps_unread(clocked_project: Project) -> None:
    project = clocked_project
    session = project.start_session("host-held")
    event = project.settled_change()
    # A reservation is what a hook or channel holds between reserving and writing.
    reserved = project.ipc(
        "hook.reserve", {"sessionId": session, "lifecycle": "turn-interruptible"}
    )
    assert reserved is not None
    done = cli("events", "ack", "--session", session, "--socket", project.daemon.socket)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "Acknowledged 0 events.",
        "1 event stays unread: a delivery in flight holds it. Acknowledge it by id once "
        "shown, or run this again after 30 s.",
    ]
    assert project.states("host-held") == {event: "unread"}


DRAFTS = """---
watch:
  type: file-fingerprint
  globs: "drafts/*.md"
  interval: 5s
urgency: high
---
Read the new draft.
"""


@pytest.mark.slow
def test_a_file_created_then_edited_reaches_the_agent_once_as_created(
    clocked_project: Project,
) -> None:
    project = clocked_project
    folder = project.root / ".claude" / "monitors" / "drafts"
    folder.mkdir()
    (folder / "MONITOR.md").write_text(DRAFTS)
    (project.root / "drafts").mkdir()
    session = project.start_session("host-new")
    daemon = project.daemon
    daemon.advance(6)
    daemon.tick()  # the drafts monitor's baseline
    note = project.root / "drafts" / "b.md"
    note.write_text("draft\n")
    daemon.advance(6)
    daemon.tick()
    note.write_text("draft\nmore\n")
    daemon.advance(6)  # inside the 15 s settle of the creation
    daemon.tick()
    daemon.advance(16)
    daemon.tick()
    rows = daemon.query("SELECT id, title FROM monitor_events WHERE monitor_id = 'drafts'")
    assert [title for _id, title in rows] == [f"File created: {note}", f"File changed: {note}"]
    (created, _), (edited, _) = rows
    daemon.advance(16)
    out, _err = project.prompt("host-new", "next")
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert f"File created: {note}" in context
    assert "File changed" not in context
    assert "+ 1: draft\n+ 2: more" in context
    assert f"--event-ids {edited}\n" in context
    done = cli("events", "ack", "--session", session, "--event-ids", edited)
    assert done.stdout == "Acknowledged 1 event.\n"
    states = project.states("host-new")
    assert (states[created], states[edited]) == ("acknowledged", "acknowledged")
