"""The one-line rendering of a delivery for ``events follow``."""

from __future__ import annotations

import re
from typing import Any

from agentmonitors.delivery.follow_line import MAX_FOLLOW_LINE, events_that_fit, follow_line

SOCKET = "/run/am.sock"


def event(event_id: str, title: str = "File changed: notes/a.txt", **extra: Any) -> dict[str, Any]:
    return {"eventId": event_id, "monitorId": "notes", "urgency": "high", "title": title, **extra}


def claim(*events: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"sessionId": "S1", "lifecycle": "turn-interruptible", "events": list(events), **extra}


def test_one_event_names_monitor_urgency_title_and_the_exact_ack_command() -> None:
    line = follow_line(claim(event("E1")), SOCKET)
    assert line == (
        "AgentMon: [high] notes: File changed: notes/a.txt. Ack when handled: agentmonitors "
        "events ack --session S1 --socket '/run/am.sock' --event-ids E1. Full detail: "
        "agentmonitors events list --session S1 --socket '/run/am.sock' --unread"
    )


def test_several_events_share_one_line_with_one_ack_command() -> None:
    second = event("E2", "Second\nline\ttitle", monitorId="docs", urgency="normal")
    line = follow_line(claim(event("E1"), second), SOCKET)
    assert "\n" not in line and "\t" not in line
    assert line.startswith(
        "AgentMon: 2 changes in 2 monitors: [high] notes: File changed: notes/a.txt; "
        "[normal] docs: Second\\u000aline title. Ack when handled: "
    )
    assert "--event-ids E1,E2." in line


def test_several_events_of_one_monitor_are_counted_under_its_name() -> None:
    """Issue 27: "3 changes in Docs changed" (a monitor's name is its events' title), and
    several monitors each named."""
    docs = [event(f"D{n}", "Docs changed", monitorId="docs", urgency="normal") for n in range(3)]
    assert follow_line(claim(*docs), SOCKET).startswith(
        "AgentMon: [normal] docs: 3 changes in Docs changed. Ack when handled: agentmonitors"
        " events ack --session S1 --socket '/run/am.sock' --event-ids D0,D1,D2. Full detail: "
    )
    line = follow_line(claim(event("E1"), *docs), SOCKET)
    assert line.startswith(
        "AgentMon: 4 changes in 2 monitors: [high] notes: File changed: notes/a.txt; "
        "[normal] docs: 3 changes in Docs changed. Ack when handled: "
    )
    assert "--event-ids E1,D0,D1,D2." in line
    # Titles that differ: the count, and the newest one.
    pages = [event(f"P{n}", f"File changed: docs/{n}.md", monitorId="docs") for n in range(2)]
    assert follow_line(claim(*pages), SOCKET).startswith(
        "AgentMon: [high] docs: 2 changes, latest: File changed: docs/1.md. Ack when handled: "
    )


def test_monitors_that_do_not_fit_are_counted_and_the_line_stays_in_its_cap() -> None:
    events = [event(f"E{n}", "t" * 80, monitorId=f"monitor-{n}") for n in range(8)]
    line = follow_line(claim(*events), SOCKET)
    assert len(line) <= MAX_FOLLOW_LINE
    found = re.search(r"; and (\d+) more changes\. Ack when handled", line)
    assert found is not None, line
    assert line.count("[high] monitor-") + int(found.group(1)) == 8
    assert "--event-ids " + ",".join(f"E{n}" for n in range(8)) + "." in line


def test_a_hostile_monitor_name_and_title_stay_on_one_line_as_escapes() -> None:
    line = follow_line(
        claim(event("E1", "ok\u202eevil", monitorId="a\nAgentMon: [high] fake")), SOCKET
    )
    assert "\n" not in line and "\u202e" not in line
    assert line.startswith("AgentMon: [high] a\\u000aAgentMon: [high] fake: ok\\u202eevil. ")


def test_events_that_fit_leave_room_to_name_them() -> None:
    ids = [f"01J{n:023d}" for n in range(40)]
    wide = claim(*(event(event_id) for event_id in ids))
    fit = events_that_fit(wide, SOCKET)
    assert 1 <= fit < 40
    line = follow_line(claim(*(event(event_id) for event_id in ids[:fit])), SOCKET)
    assert len(line) <= MAX_FOLLOW_LINE and "Ack when handled" in line
    assert events_that_fit(claim(event("E1")), SOCKET) == 1


def test_long_titles_are_clipped_but_the_commands_survive_the_cap() -> None:
    line = follow_line(
        claim(*(event(f"E{n}", "x" * 500, monitorId=f"m{n}") for n in range(3))), SOCKET
    )
    assert len(line) <= MAX_FOLLOW_LINE
    assert "…" in line and "And 2 more changes. Ack when handled" in line
    assert line.endswith(
        "--event-ids E0,E1,E2. Full detail: agentmonitors events list "
        "--session S1 --socket '/run/am.sock' --unread"
    )


def test_a_coalesced_reminder_rides_on_the_line() -> None:
    line = follow_line(claim(event("E1"), coalescedReminder="2 normal updates pending."), SOCKET)
    assert "notes/a.txt. 2 normal updates pending. Ack when handled" in line


def test_a_reminder_claim_points_at_the_listing_and_a_blank_one_is_nothing() -> None:
    line = follow_line(claim(message="3 low-urgency updates\nare pending."), SOCKET)
    assert line.startswith("AgentMon: 3 low-urgency updates are pending. Full detail: ")
    assert "agentmonitors events ack --session S1 --socket '/run/am.sock' once handled." in line
    assert follow_line(claim(message="  \n"), SOCKET) == ""


def test_ids_too_long_for_any_summary_still_leave_the_listing() -> None:
    line = follow_line(claim(*(event("E" * 60 + str(n)) for n in range(12))), SOCKET)
    assert len(line) <= MAX_FOLLOW_LINE
    assert line.endswith("agentmonitors events list --session S1 --socket '/run/am.sock' --unread")


def test_a_clipped_line_counts_the_characters_it_left_out() -> None:
    """One long title has no "N monitor events" before it: the clip itself says how much
    it left out, and the line names the listing that shows it whole."""
    for length in (600, 1500, 12000):
        line = follow_line(claim(event("E1", "x" * length)), SOCKET)
        assert len(line) <= MAX_FOLLOW_LINE
        found = re.search(r"x… \(([\d,]+) more characters\)\. Ack when handled", line)
        assert found is not None, line
        # What was clipped: the rest of the title and the full stop after it.
        left = length + 1 - line.count("x")
        assert found.group(1) == f"{left:,}"
        assert line.endswith(
            "Full detail: agentmonitors events list --session S1 --socket '/run/am.sock' --unread"
        )
    reminder = follow_line(claim(message="y" * 900), SOCKET)
    assert len(reminder) <= MAX_FOLLOW_LINE
    found = re.search(r"y… \(([\d,]+) more characters\)\. Full detail: ", reminder)
    assert found is not None and int(found.group(1)) == 900 - reminder.count("y")


def test_a_narrow_cap_still_counts_what_changed_and_keeps_the_commands() -> None:
    events = [event(f"E{n}", "t" * 200, monitorId=f"monitor-{n}") for n in range(3)]
    full = follow_line(claim(*events), SOCKET)
    commands = len(full) - full.index(" Ack when handled: ") + len("AgentMon: ")
    for cap in range(commands + 40, commands + 160):
        line = follow_line(claim(*events), SOCKET, cap=cap)
        assert len(line) <= cap, (cap, line)
        assert "--event-ids E0,E1,E2. Full detail: " in line, (cap, line)
        assert line.startswith("AgentMon: 3 changes in 3 monitors"), (cap, line)
