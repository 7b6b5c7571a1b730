"""Issue 27, point 2: each live line says what changed, and each new change wakes once.

A real (clocked) daemon over a project with a high monitor (``notes``) and a normal one
(``docs``), a real ``events follow`` process whose stdout lines are compared whole, and
real hook processes with Claude Code's payloads for what the hooks do meanwhile.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.delivery.text import _socket_clause
from agentmonitors.workspace import enable_file_path, read_local_state
from tests.transports.clocked_project import Project
from tests.transports.test_follow import Follow, follow_records
from tests.waiting import wait_for

pytestmark = pytest.mark.slow

HOST = "host-wake"
DOCS = """---
name: Docs changed
watch:
  type: file-fingerprint
  globs: "docs/*.md"
urgency: normal
---
Read the changed page.
"""


@pytest.fixture
def project(clocked_project: Project) -> Project:
    """The clocked project with a normal-urgency ``docs`` monitor, past its baseline."""
    folder = clocked_project.root / ".claude" / "monitors" / "docs"
    folder.mkdir(parents=True)
    (folder / "MONITOR.md").write_text(DOCS)
    (clocked_project.root / "docs").mkdir()
    for name in ("a.md", "b.md"):
        (clocked_project.root / "docs" / name).write_text("first\n")
    for _ in range(3):  # the docs monitor records its baseline (no event)
        clocked_project.daemon.advance(31)
        clocked_project.daemon.tick()
    return clocked_project


@pytest.fixture
def follows() -> Iterator[list[Follow]]:
    started: list[Follow] = []
    yield started
    for follow in started:
        follow.stop()


def follow_session(project: Project, session_id: str, follows: list[Follow]) -> Follow:
    follow = Follow(project, session_id)
    follows.append(follow)
    wait_for(lambda: follow_records(session_id))
    return follow


def edit_docs(project: Project, *names: str, text: str = "changed\n") -> list[str]:
    """Rewrite these pages (whole, as editors save); tick until their events are stored."""
    before = set(project.states_any())
    for name in names:
        scratch = project.root / "docs" / f".{name}.partial"
        scratch.write_text(text)
        os.replace(scratch, project.root / "docs" / name)
    new: list[str] = []
    for _ in range(6):
        project.daemon.advance(31)
        project.daemon.tick()
        new = [event for event in project.states_any() if event not in before]
        if len(new) == len(names):
            break
    assert len(new) == len(names), new
    return new


def committed(project: Project, *event_ids: str) -> None:
    """Wait for the follower's commit of the line naming these events: the test moves
    the daemon's clock by 31 s a tick, past a lease's 30 s, which a real clock never
    does between a write and its commit."""
    wait_for(lambda: all(project.states(HOST)[event_id] == "claimed" for event_id in event_ids))


def event(project: Project, session_id: str, event_id: str) -> dict[str, Any]:
    rows = project.ipc("events.list", {"sessionId": session_id})
    return dict(next(row for row in rows if row["id"] == event_id))


def tail(project: Project, session_id: str, ids: list[str]) -> str:
    socket = _socket_clause(project.daemon.socket)
    return (
        f" Ack when handled: agentmonitors events ack --session {session_id}{socket}"
        f" --event-ids {','.join(ids)}. Full detail: agentmonitors events list --session"
        f" {session_id}{socket} --unread\n"
    )


def test_a_normal_change_is_one_line_naming_its_monitor_and_title(
    project: Project, follows: list[Follow]
) -> None:
    """Before issue 27 the line said only "Monitored changes are pending"."""
    session_id = project.start_session(HOST)
    follow = follow_session(project, session_id, follows)
    [event_id] = edit_docs(project, "a.md")

    line = follow.line()
    assert line == "AgentMon: [normal] docs: Docs changed." + tail(project, session_id, [event_id])
    assert follow.no_line(within=1.0)


def test_each_new_change_wakes_once_though_the_last_is_not_acknowledged(
    project: Project, follows: list[Follow]
) -> None:
    """The hooks' reminder stays quiet until an ack; the live line names each new event
    once, and only the new one."""
    session_id = project.start_session(HOST)
    follow = follow_session(project, session_id, follows)
    [first] = edit_docs(project, "a.md")
    line = follow.line()
    assert line is not None and f"--event-ids {first}." in line
    committed(project, first)

    [second] = edit_docs(project, "b.md")
    title = event(project, session_id, second)["title"]
    line = follow.line()
    assert line == f"AgentMon: [normal] docs: {title}." + tail(project, session_id, [second])
    assert follow.no_line(within=1.0)  # nothing named twice
    committed(project, first, second)
    # The hooks' rule is untouched: claimed, unacknowledged normal rows keep the
    # reminder quiet, and no hook shows either event again.
    out, _err = project.prompt(HOST, "anything new?")
    assert out == ""

    [third] = edit_docs(project, "a.md", text="third\n")
    line = follow.line()
    assert line is not None and f"--event-ids {third}." in line
    assert first not in line and second not in line


def test_changes_settled_together_name_every_monitor_in_one_line(
    project: Project, follows: list[Follow]
) -> None:
    """Two pages of one monitor are counted under its name; the high note is named with
    its title; the ack command names all three."""
    session_id = project.start_session(HOST)
    pages = edit_docs(project, "a.md", "b.md")
    note = project.settled_change()
    title = event(project, session_id, note)["title"]

    follow = follow_session(project, session_id, follows)
    line = follow.line()
    ids = line.split(" --event-ids ")[1].split(".")[0].split(",") if line else []
    assert ids[0] == note and sorted(ids[1:]) == sorted(pages)
    assert line == (
        f"AgentMon: 3 changes in 2 monitors: [high] notes: {title};"
        " [normal] docs: 2 changes in Docs changed." + tail(project, session_id, ids)
    )
    assert follow.no_line(within=1.0)


def set_wake(project: Project, value: str) -> None:
    """Write ``wake: <value>`` into the enable file as a user would, by editing its text."""
    path = Path(enable_file_path(project.ws))
    head, sep, rest = path.read_text().partition("---\n")
    front, close, body = rest.partition("---\n")
    kept = "".join(line for line in front.splitlines(True) if not line.startswith("wake:"))
    path.write_text(f"{head}{sep}{kept}wake: {value}\n{close}{body}")


def test_wake_high_leaves_normal_changes_to_the_hooks(
    project: Project, follows: list[Follow]
) -> None:
    session_id = project.start_session(HOST)
    set_wake(project, "high")
    follow = follow_session(project, session_id, follows)
    [page] = edit_docs(project, "a.md")
    assert follow.no_line(within=1.5)
    assert project.states(HOST)[page] == "unread"
    # The hooks deliver it as they always did: the normal reminder at the next prompt.
    out, _err = project.prompt(HOST, "anything new?")
    assert "Monitored changes are pending" in out

    note = project.settled_change()
    line = follow.line()
    assert line is not None and line.startswith("AgentMon: [high] notes: ")
    assert f"--event-ids {note}." in line and page not in line
    # The setting survives the enable file being rewritten (session start writes it).
    assert read_local_state(project.ws).wake == "high"


def test_the_wake_setting_is_read_again_when_the_enable_file_changes(
    project: Project, follows: list[Follow]
) -> None:
    session_id = project.start_session(HOST)
    set_wake(project, "high")
    follow = follow_session(project, session_id, follows)
    [first] = edit_docs(project, "a.md")
    assert follow.no_line(within=1.0)
    set_wake(project, "all")
    # Nothing had surfaced it yet: it is new to the live line, which now names it.
    line = follow.line()
    assert line is not None and f"--event-ids {first}." in line
    committed(project, first)
    [second] = edit_docs(project, "b.md")
    line = follow.line()
    assert line is not None and f"--event-ids {second}." in line and first not in line


def test_a_named_change_is_still_shown_whole_by_the_hooks_recap(
    project: Project, follows: list[Follow]
) -> None:
    """A line names a change without showing it: after a compaction, the recap the
    SessionStart hook injects still shows the change itself, diffed from what the
    session last saw."""
    session_id = project.start_session(HOST)
    follow = follow_session(project, session_id, follows)
    note = project.settled_change("second\n")
    line = follow.line()
    assert line is not None and f"--event-ids {note}." in line
    assert "second" not in line

    code, out, err = project.hook(
        ["session", "start"], project.payload("SessionStart", HOST, source="compact")
    )
    assert code == 0, err
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert note in context
    assert "- 1: first" in context and "+ 1: second" in context, context
