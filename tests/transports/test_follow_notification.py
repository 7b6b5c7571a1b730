"""The turn a Monitor line starts: its UserPromptSubmit must not deliver the line again.

Claude Code turns each line of ``events follow`` into a ``<task-notification>`` and runs
the UserPromptSubmit hook with that notification as ``prompt`` (observed with the real
client in tests/e2e/test_live_monitor.py, whose exact shape is rebuilt here). follow
commits a line when it is written, so the hook of that turn finds the event claimed and
delivers only what follow has not; between the write and the commit the reservation's
lease holds the rows. Real daemon, real ``events follow`` and hook processes; where the
moment between write and commit matters, the test speaks follow's IPC itself.
"""

from __future__ import annotations

import json
import signal

import pytest

from tests.transports.clocked_project import Project
from tests.transports.test_follow import HOST, Follow, follows, start  # noqa: F401
from tests.waiting import wait_for

pytestmark = pytest.mark.slow

TASK_ID = "b72sgdgpb"
DESCRIPTION = "AgentMon live updates"


def task_notification(line: str) -> str:
    """The ``prompt`` Claude Code 2.1.332 gives UserPromptSubmit for one Monitor event."""
    return (
        f"<task-notification>\n<task-id>{TASK_ID}</task-id>\n"
        f'<summary>Monitor event: "{DESCRIPTION}"</summary>\n'
        f"<event>{line}</event>\n</task-notification>"
    )


def stream_ended() -> str:
    """The ``prompt`` of the Monitor's last notification, when the command has exited."""
    return (
        f"<task-notification>\n<task-id>{TASK_ID}</task-id>\n"
        "<tool-use-id>toolu_01</tool-use-id>\n"
        f"<output-file>/tmp/claude/tasks/{TASK_ID}.output</output-file>\n"
        "<status>completed</status>\n"
        f'<summary>Monitor "{DESCRIPTION}" stream ended</summary>\n</task-notification>'
    )


def context(out: str) -> str:
    text: str = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    return text


def test_the_notification_turn_delivers_nothing_the_line_already_did(
    clocked_project: Project,
    follows: list[Follow],  # noqa: F811
) -> None:
    project = clocked_project
    _session_id, follow = start(project, follows)
    first = project.settled_change("one\n")
    line = follow.line()
    assert line is not None and first in line
    wait_for(lambda: project.states(HOST) == {first: "claimed"})

    out, err = project.prompt(HOST, task_notification(line.rstrip("\n")))
    assert out == "", out
    assert project.states(HOST) == {first: "claimed"}
    # The turn's Stop has nothing either (no low reminder is pending).
    code, out, err = project.hook(["hook", "deliver"], project.payload("Stop", HOST))
    assert code == 0 and out == "", (out, err)


def test_the_hook_still_delivers_what_follow_did_not(
    clocked_project: Project,
    follows: list[Follow],  # noqa: F811
) -> None:
    """After follow stopped, a later event is the hook's, even in a notification turn."""
    project = clocked_project
    _session_id, follow = start(project, follows)
    first = project.settled_change("one\n")
    line = follow.line()
    assert line is not None and first in line
    wait_for(lambda: project.states(HOST) == {first: "claimed"})
    follow.process.send_signal(signal.SIGTERM)
    code, _err = follow.wait()
    assert code == 0

    second = project.settled_change("two\n")
    # Claude Code queued the line and shows it now, with the stream's end right after.
    out, _err = project.prompt(HOST, task_notification(line.rstrip("\n")))
    delivered = context(out)
    assert second in delivered and first not in delivered, delivered
    assert project.states(HOST) == {first: "claimed", second: "claimed"}
    out, _err = project.prompt(HOST, stream_ended())
    assert out == "", out


def reserve_line(project: Project, session_id: str) -> tuple[str, str]:
    """What follow does before writing: the reservation id and the line it would print."""
    reply = project.ipc(
        "delivery.reserveRendered",
        {"transport": "follow", "sessionId": session_id, "socketPath": project.daemon.socket},
    )
    assert reply["reservation"] is not None, reply
    return reply["reservation"]["reservationId"], reply["text"]


def test_a_notification_turn_between_write_and_commit_leaves_the_line_alone(
    clocked_project: Project,
) -> None:
    """The lease covers the moment between follow's write and its commit."""
    project = clocked_project
    session_id = project.start_session(HOST)
    event_id = project.settled_change("one\n")
    reservation_id, line = reserve_line(project, session_id)
    assert event_id in line and "\n" not in line

    out, _err = project.prompt(HOST, task_notification(line))
    assert out == "", out
    assert project.ipc("hook.commit", {"reservationId": reservation_id}) is not None
    assert project.states(HOST) == {event_id: "claimed"}


def test_a_line_whose_commit_never_landed_is_delivered_again_not_lost(
    clocked_project: Project,
) -> None:
    """Past the lease, an uncommitted line's rows are the hooks' again: a duplicate at worst."""
    project = clocked_project
    session_id = project.start_session(HOST)
    event_id = project.settled_change("one\n")
    reservation_id, line = reserve_line(project, session_id)
    project.daemon.advance(31)  # the 30 s lease lapses before any commit

    out, _err = project.prompt(HOST, task_notification(line))
    assert event_id in context(out)
    assert project.ipc("hook.commit", {"reservationId": reservation_id}) is None
    assert project.states(HOST) == {event_id: "claimed"}
