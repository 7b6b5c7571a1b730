"""``hook deliver --debug`` names every hold, as ``held (<urgency>, <reason>): ...``.

A real daemon with a test-set clock, real ``agentmonitors hook deliver`` processes fed
Claude Code's UserPromptSubmit payload. Each test also checks that ``--debug`` leaves
stdout exactly as it is without it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.transports.clocked_project import Project

pytestmark = pytest.mark.slow

MEMO = """---
watch:
  type: file-fingerprint
  globs: "memo/*.txt"
urgency: normal
---
Read the memo.
"""
ALERTS = """---
watch:
  type: file-fingerprint
  globs: "alerts/*.txt"
urgency: high
notify:
  strategy: throttle
  suppress-for: 1s
---
Read the alert.
"""


def add_normal_monitor(project: Project) -> None:
    """A normal-urgency monitor on ``memo/*.txt``, baselined."""
    folder = project.root / ".claude" / "monitors" / "memo"
    folder.mkdir(parents=True)
    (folder / "MONITOR.md").write_text(MEMO)
    (project.root / "memo").mkdir()
    (project.root / "memo" / "a.txt").write_text("first\n")
    project.daemon.advance(31)
    project.daemon.tick()


def normal_change(project: Project, name: str, text: str) -> str:
    """Change a memo and tick until its normal event is stored; its id."""
    before = set(project.states_any())
    path: Path = project.root / "memo" / name
    path.write_text(text)
    for _ in range(6):
        project.daemon.advance(31)
        project.daemon.tick()
        new = [event for event in project.states_any() if event not in before]
        if new:
            assert len(new) == 1, new
            return new[0]
    raise AssertionError("no normal event was stored")


def debug_prompt(project: Project, host: str) -> tuple[str, list[str]]:
    """The prompt hook with ``--debug``: stdout and the debug lines."""
    out, err = project.prompt(host, "go on", "--debug")
    return out, err.splitlines()


def held(lines: list[str], urgency: str, reason: str) -> str:
    prefix = f"agentmonitors hook deliver --debug: held ({urgency}, {reason}): "
    found = [line for line in lines if line.startswith(prefix)]
    assert found, "\n".join(lines)
    return found[0][len(prefix) :]


def test_a_high_event_inside_its_settle_window_is_held_not_nothing(
    clocked_project: Project,
) -> None:
    project = clocked_project
    project.start_session("host-settle")
    # Throttled, not debounced: stored at once, so it spends its first 15 s settling.
    folder = project.root / ".claude" / "monitors" / "alerts"
    folder.mkdir(parents=True)
    (folder / "MONITOR.md").write_text(ALERTS)
    (project.root / "alerts").mkdir()
    (project.root / "alerts" / "a.txt").write_text("first\n")
    project.daemon.advance(31)
    project.daemon.tick()
    (project.root / "alerts" / "a.txt").write_text("changed\n")
    for _ in range(6):
        project.daemon.advance(31)
        project.daemon.tick()
        if project.states_any():
            break
    [(created_s,)] = project.daemon.query("SELECT created_at FROM monitor_events")
    assert project.daemon.now_ms - created_s * 1000 < 15_000
    # Stored, but younger than the 15 s delivery settle.
    out, lines = debug_prompt(project, "host-settle")
    assert out == ""
    message = held(lines, "high", "settle-window")
    assert "settle window" in message
    assert any("claim: null" in line for line in lines)
    assert not any("no stored event is held" in line for line in lines)

    project.daemon.advance(16)
    quiet, _ = project.prompt("host-settle", "go on")
    assert "alerts/a.txt" in json.loads(quiet)["hookSpecificOutput"]["additionalContext"]


def test_a_claimed_reminder_is_already_claimed_then_coalesced_until_ack(
    clocked_project: Project,
) -> None:
    project = clocked_project
    session = project.start_session("host-remind")
    add_normal_monitor(project)
    first = normal_change(project, "a.txt", "one\n")
    quiet, _ = project.prompt("host-remind", "go on")
    assert "Monitored changes are pending" in quiet
    assert project.states("host-remind")[first] == "claimed"

    out, lines = debug_prompt(project, "host-remind")
    assert out == ""
    message = held(lines, "normal", "already-claimed")
    assert f"agentmonitors events ack --session {session} --event-ids {first}" in message

    normal_change(project, "b.txt", "two\n")
    out, lines = debug_prompt(project, "host-remind")
    assert out == ""
    assert "coalesced-until-ack" in held(lines, "normal", "coalesced-until-ack")

    project.ipc("events.ack", {"sessionId": session, "eventIds": [first]})
    out, lines = debug_prompt(project, "host-remind")
    assert "Monitored changes are pending" in out
    assert any("no stored event is held for this lifecycle right now" in line for line in lines)


def test_rows_leased_by_an_in_flight_reservation_are_reserved_in_flight(
    clocked_project: Project,
) -> None:
    project = clocked_project
    session = project.start_session("host-lease")
    add_normal_monitor(project)
    normal_change(project, "a.txt", "one\n")
    # Another transport (a channel push, say) holds the reminder's rows right now.
    lease = project.ipc("hook.reserve", {"sessionId": session, "lifecycle": "turn-interruptible"})
    assert lease is not None
    out, lines = debug_prompt(project, "host-lease")
    assert out == ""
    message = held(lines, "normal", "reserved-in-flight")
    assert "ack" not in message
    project.ipc("hook.release", {"reservationId": lease["reservationId"]})

    project.ipc("events.ack", {"sessionId": session})
    project.settled_change()
    lease = project.ipc("hook.reserve", {"sessionId": session, "lifecycle": "turn-interruptible"})
    assert lease is not None and lease["claim"]["urgency"] == "high"
    out, lines = debug_prompt(project, "host-lease")
    assert out == ""
    assert "ack" not in held(lines, "high", "reserved-in-flight")


def test_more_settled_events_than_fit_are_reported_deferred_by_cap(
    clocked_project: Project,
) -> None:
    project = clocked_project
    project.start_session("host-cap")
    for index in range(60):
        (project.root / "notes" / f"note-{index:02d}.txt").write_text(f"note {index}\n")
    stored: list[str] = []
    for _ in range(6):
        project.daemon.advance(31)
        project.daemon.tick()
        stored = project.states_any()
        if len(stored) >= 60:
            break
    assert len(stored) == 60
    project.daemon.advance(16)

    quiet, _ = project.prompt("host-cap", "go on")
    project_states = project.states("host-cap")
    shown = [event for event, state in project_states.items() if state == "claimed"]
    assert 0 < len(shown) < 60
    assert len(json.loads(quiet)["hookSpecificOutput"]["additionalContext"]) <= 4000

    out, lines = debug_prompt(project, "host-cap")
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    now_claimed = [e for e, state in project.states("host-cap").items() if state == "claimed"]
    shown_now = len(now_claimed) - len(shown)
    left = 60 - len(now_claimed)
    message = held(lines, "high", "deferred-by-cap")
    assert message.startswith(f"{left} of {left + shown_now} settled high-urgency event(s)")
    assert "4000-char context cap" in message
    # Named once, by the daemon's diagnosis (the one ``monitor explain`` reports),
    # before anything is reserved.
    capped = [index for index, line in enumerate(lines) if "(high, deferred-by-cap)" in line]
    claimed_at = next(index for index, line in enumerate(lines) if "debug: claim: " in line)
    assert len(capped) == 1 and capped[0] < claimed_at
    assert context
