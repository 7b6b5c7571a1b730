"""What the agent is told about a change's diff is true, driven as a user drives it.

A real daemon with a test-set clock; sessions opened by the real SessionStart hook,
prompts through the real ``hook deliver``, ``diff``/``events`` through the real CLI.
A session's diff base is what it saw (shown or acknowledged), per session; the first
change after a baseline carries a diff; acknowledging is seeing; a change of the final
newline or of line endings is said in words.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.transports.clocked_project import Project, agentmonitors_in

pytestmark = pytest.mark.slow


def cli(project: Project, *args: str) -> tuple[int, str, str]:
    return agentmonitors_in(project.root, *args)


def cli_json(project: Project, *args: str) -> Any:
    code, out, err = cli(project, *args, "--format", "json")
    assert code == 0, (out, err)
    return json.loads(out)


def key(project: Project) -> str:
    return str(project.root / "notes" / "a.txt")


def session_diff(project: Project, session: str) -> dict[str, Any]:
    result: dict[str, Any] = cli_json(
        project, "diff", "notes", "--object", key(project), "--session", session
    )
    return result


def delivered(project: Project, host: str) -> str:
    """The context ``hook deliver`` hands the agent on its next prompt ("" for none)."""
    out, _err = project.prompt(host, "what changed?")
    if not out.strip():
        return ""
    return str(json.loads(out)["hookSpecificOutput"]["additionalContext"])


def test_each_session_diffs_from_what_it_saw_never_from_a_later_snapshot(
    clocked_project: Project,
) -> None:
    project = clocked_project
    shown = project.start_session("host-shown")
    unseen = project.start_session("host-unseen")
    first = project.settled_change("second\n")

    # Neither session has seen the change: both diff from the baseline's text.
    for session in (shown, unseen):
        result = session_diff(project, session)
        assert result["changed"] is True, result
        assert result["diff"] == "- 1: first\n+ 1: second"
        assert result["from"]["kind"] == "session-baseline"

    # One session is shown it: its base is now that version, the other's is not.
    assert "+ 1: second" in delivered(project, "host-shown")
    assert session_diff(project, shown)["changed"] is False
    code, out, _ = cli(project, "diff", "notes", "--object", key(project), "--session", shown)
    assert code == 0 and "No difference." in out and "last saw" in out
    assert session_diff(project, unseen)["diff"] == "- 1: first\n+ 1: second"

    project.settled_change("third\n")
    assert session_diff(project, shown)["diff"] == "- 1: second\n+ 1: third"
    assert session_diff(project, unseen)["diff"] == "- 1: first\n+ 1: third"
    assert first in project.states("host-unseen")


def test_the_first_change_after_a_baseline_carries_its_diff(clocked_project: Project) -> None:
    project = clocked_project
    session = project.start_session("host-first")
    event = project.settled_change("second\n")

    (row,) = [
        item
        for item in cli_json(project, "events", "list", "--session", session)
        if item["id"] == event
    ]
    assert row["diffText"] == "- 1: first\n+ 1: second"
    context = delivered(project, "host-first")
    assert "Changes:\n- 1: first\n+ 1: second" in context
    # Without a session, the verb diffs from the version kept by the baseline.
    plain = cli_json(project, "diff", "notes", "--object", key(project))
    assert plain["diff"] == "- 1: first\n+ 1: second"
    assert plain["from"]["baseline"] is True and plain["from"]["eventId"] is None


def test_an_ack_without_a_delivery_moves_the_diff_base(clocked_project: Project) -> None:
    project = clocked_project
    session = project.start_session("host-ack")
    shown = project.settled_change("second\n")
    assert shown in delivered(project, "host-ack")  # shown: the base is "second"

    acked = project.settled_change("third\n")
    pending = project.settled_change("fourth\n")
    # The agent read the third version some other way and acknowledges it, no hook.
    code, _out, err = cli(project, "events", "ack", "--session", session, "--event-ids", acked)
    assert code == 0, err
    assert session_diff(project, session)["diff"] == "- 1: third\n+ 1: fourth"

    context = delivered(project, "host-ack")
    assert pending in context
    assert "Changes:\n- 1: third\n+ 1: fourth" in context
    assert "second" not in context


def test_a_change_of_the_final_newline_or_line_endings_is_said_in_words(
    clocked_project: Project,
) -> None:
    project = clocked_project
    session = project.start_session("host-layout")
    shown = project.settled_change("second\n")
    assert shown in delivered(project, "host-layout")

    project.settled_change("second")
    code, out, _ = cli(project, "diff", "notes", "--object", key(project), "--session", session)
    assert code == 0 and "~ trailing newline removed" in out and "No difference" not in out
    assert "Changes:\n~ trailing newline removed" in delivered(project, "host-layout")

    project.settled_change("second\r\nline\r\n")
    context = delivered(project, "host-layout")
    assert "~ line endings changed from LF to CRLF" not in context  # no line break before
    assert "~ trailing newline added\n+ 2: line" in context

    project.settled_change("second\nline\n")
    result = session_diff(project, session)
    assert result["diff"] == "~ line endings changed from CRLF to LF"
    assert "Changes:\n~ line endings changed from CRLF to LF" in delivered(project, "host-layout")


DIGEST = """---
watch:
  type: file-fingerprint
  globs: "digest/*.txt"
urgency: normal
---
Read the digest.
"""


def test_a_reminder_is_not_seeing_the_change(clocked_project: Project) -> None:
    project = clocked_project
    folder = project.root / ".claude" / "monitors" / "digest"
    folder.mkdir(parents=True)
    (folder / "MONITOR.md").write_text(DIGEST)
    (project.root / "digest").mkdir()
    target = project.root / "digest" / "a.txt"
    target.write_text("first\n")
    session = project.start_session("host-reminded")
    project.daemon.advance(31)
    project.daemon.tick()  # baseline
    target.write_text("second\n")
    project.daemon.advance(31)
    project.daemon.tick()
    (event,) = [
        row[0]
        for row in project.daemon.query("SELECT id FROM monitor_events WHERE monitor_id = 'digest'")
    ]
    project.daemon.advance(31)
    project.daemon.tick()

    # The prompt gets the reminder: a count, not the change. The agent follows its
    # advice and asks for the diff: the change is still there to see.
    context = delivered(project, "host-reminded")
    assert "Monitored changes are pending." in context and "second" not in context
    assert project.states("host-reminded")[event] == "claimed"
    result = cli_json(project, "diff", "digest", "--object", str(target), "--session", session)
    assert (result["changed"], result["diff"]) == (True, "- 1: first\n+ 1: second")

    # Acknowledged, it is seen; the next reminder again leaves the base where it was.
    assert cli(project, "events", "ack", "--session", session)[0] == 0
    target.write_text("third\n")
    for _ in range(2):
        project.daemon.advance(31)
        project.daemon.tick()
    assert "Monitored changes are pending." in delivered(project, "host-reminded")
    result = cli_json(project, "diff", "digest", "--object", str(target), "--session", session)
    assert (result["changed"], result["diff"]) == (True, "- 1: second\n+ 1: third")
