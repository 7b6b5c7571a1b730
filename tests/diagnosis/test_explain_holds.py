"""``monitor explain`` names, per session, the hold on the monitor's events and who listens.

A real daemon with a test-set clock, sessions opened by the real SessionStart hook,
prompts through the real ``hook deliver``; the report comes from the daemon's
``monitor.explain`` and, for the text form, from the real CLI.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.delivery.heartbeats import (
    CHANNEL_TTL_MS,
    FOLLOW_TTL_MS,
    record_file_name,
    transports_dir,
    write_heartbeat,
)
from tests.transports.clocked_project import Project
from tests.transports.test_hook_debug import ALERTS, add_normal_monitor, normal_change

pytestmark = pytest.mark.slow


def explain(project: Project, monitor_id: str) -> dict[str, Any]:
    report = project.ipc("monitor.explain", {"monitorId": monitor_id, "workspacePath": project.ws})
    assert isinstance(report, dict)
    return report


def session_entry(report: dict[str, Any], session_id: str) -> dict[str, Any]:
    delivery = next(stage for stage in report["stages"] if stage["id"] == "delivery")
    assert delivery["status"] == "ok", delivery
    return next(item for item in delivery["details"]["sessions"] if item["sessionId"] == session_id)


def explain_text(project: Project, monitor_id: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "agentmonitors", "monitor", "explain", monitor_id],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=project.root,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def add_alerts_monitor(project: Project) -> None:
    """A throttled high monitor: its event is stored at once, then settles for 15 s."""
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
            return
    raise AssertionError("no high event was stored")


def test_a_settling_high_event_names_the_settle_window_and_the_seconds_left(
    clocked_project: Project,
) -> None:
    project = clocked_project
    session = project.start_session("host-settle")
    add_alerts_monitor(project)
    [(created_s,)] = project.daemon.query("SELECT created_at FROM monitor_events")
    age_ms = project.daemon.now_ms - created_s * 1000
    assert age_ms < 15_000

    entry = session_entry(explain(project, "alerts"), session)
    assert entry["hold"] == "settle-window"
    [hold] = entry["holds"]
    assert hold["urgency"] == "high"
    assert hold["settleRemainingMs"] == 15_000 - age_ms
    assert entry["lifecycle"] == "turn-interruptible"
    assert entry["monitorPending"] == 1
    seconds = -(-(15_000 - age_ms) // 1000)
    assert "held: settle-window (" in entry["state"]
    assert f"about {seconds}s left" in entry["state"]

    project.daemon.advance(16)
    entry = session_entry(explain(project, "alerts"), session)
    assert entry["hold"] is None and entry["holds"] == []
    assert entry["state"] == "deliverable at the next prompt or tool call"

    out, _ = project.prompt("host-settle", "go on")
    assert "alerts/a.txt" in out
    [event] = project.states_any()
    entry = session_entry(explain(project, "alerts"), session)
    assert entry["holds"] == [] and entry["monitorClaimed"] == 1
    assert entry["state"] == (
        "delivered, waiting for acknowledgement (`agentmonitors events ack --session"
        f" {session} --event-ids {event}` once handled)"
    )


def test_a_claimed_reminder_is_already_claimed_then_coalesced_with_the_exact_ack(
    clocked_project: Project,
) -> None:
    project = clocked_project
    session = project.start_session("host-remind")
    add_normal_monitor(project)
    first = normal_change(project, "a.txt", "one\n")
    assert session_entry(explain(project, "memo"), session)["hold"] is None
    quiet, _ = project.prompt("host-remind", "go on")
    assert "Monitored changes are pending" in quiet

    ack = f"agentmonitors events ack --session {session} --event-ids {first}"
    report = explain(project, "memo")
    entry = session_entry(report, session)
    assert entry["hold"] == "already-claimed"
    assert entry["holds"][0]["ackCommand"] == ack
    assert entry["holds"][0]["claimedEventIds"] == [first]
    delivery = report["stages"][-1]
    assert delivery["details"]["reminderSuppression"][0]["sessionId"] == session
    assert delivery["details"]["reminderSuppression"][0]["reason"] == "already-claimed"

    second = normal_change(project, "b.txt", "two\n")
    entry = session_entry(explain(project, "memo"), session)
    assert entry["hold"] == "coalesced-until-ack"
    assert entry["holds"][0]["ackCommand"] == ack
    assert entry["monitorPending"] == 1 and entry["monitorClaimed"] == 1

    # The text form: one line under the delivery stage for this session, with the ack.
    text = explain_text(project, "memo").splitlines()
    at = next(index for index, line in enumerate(text) if line.startswith("✓ Projection"))
    session_lines = [line for line in text[at + 1 :] if line.startswith("    ")]
    assert len(session_lines) == 1
    line = session_lines[0]
    assert line.startswith(f"    {session}: unread 1, claimed 1, acknowledged 0 - ")
    assert "held: coalesced-until-ack (" in line and f"`{ack}`" in line
    assert "hook listening" in line and "no channel" in line

    project.ipc("events.ack", {"sessionId": session, "eventIds": [first]})
    entry = session_entry(explain(project, "memo"), session)
    assert entry["hold"] is None
    assert entry["state"] == "deliverable at the next prompt or tool call"
    assert entry["monitorPending"] == 1 and second


def test_rows_leased_by_an_in_flight_delivery_are_reserved_in_flight_without_ack_advice(
    clocked_project: Project,
) -> None:
    project = clocked_project
    session = project.start_session("host-lease")
    add_normal_monitor(project)
    normal_change(project, "a.txt", "one\n")
    lease = project.ipc("hook.reserve", {"sessionId": session, "lifecycle": "turn-interruptible"})
    assert lease is not None

    entry = session_entry(explain(project, "memo"), session)
    assert entry["hold"] == "reserved-in-flight"
    assert entry["monitorLeased"] == 1 and entry["monitorPending"] == 0
    assert "ackCommand" not in entry["holds"][0]
    assert "ack" not in entry["state"]

    project.ipc("hook.release", {"reservationId": lease["reservationId"]})
    assert session_entry(explain(project, "memo"), session)["hold"] is None


def test_more_settled_events_than_fit_are_deferred_by_cap_as_the_hook_then_shows(
    clocked_project: Project,
) -> None:
    project = clocked_project
    session = project.start_session("host-cap")
    for index in range(60):
        # Written whole (a rename), as settled_change does: a reconcile that lands
        # between a plain write's truncate and its write sees an empty note first.
        scratch = project.root / "notes" / f".note-{index:02d}.partial"
        scratch.write_text(f"note {index}\n")
        os.replace(scratch, project.root / "notes" / f"note-{index:02d}.txt")
    stored: list[str] = []
    for _ in range(6):
        project.daemon.advance(31)
        project.daemon.tick()
        stored = project.states_any()
        if len(stored) >= 60:
            break
    assert len(stored) == 60
    project.daemon.advance(16)

    entry = session_entry(explain(project, "notes"), session)
    assert entry["hold"] == "deferred-by-cap"
    [hold] = entry["holds"]
    assert hold["deferredCount"] + hold["deliverableCount"] == 60
    assert 0 < hold["deliverableCount"] < 60

    # The prediction is what the hook then does: exactly that many are shown.
    out, _ = project.prompt("host-cap", "go on")
    assert len(json.loads(out)["hookSpecificOutput"]["additionalContext"]) <= 4000
    claimed = [event for event, state in project.states("host-cap").items() if state == "claimed"]
    assert len(claimed) == hold["deliverableCount"]
    after = session_entry(explain(project, "notes"), session)
    assert (
        after["holds"][0]["deferredCount"] + after["holds"][0]["deliverableCount"]
        == (hold["deferredCount"])
    )


def test_listeners_come_from_the_session_heartbeats(
    clocked_project: Project,
) -> None:
    project = clocked_project
    session = project.start_session("host-listen")
    project.settled_change()
    entry = session_entry(explain(project, "notes"), session)
    # SessionStart ran the hook path, which heartbeats; no channel ever ran.
    assert entry["listeners"]["hook"]["listening"] is True
    assert "lastDeliveryAt" not in entry["listeners"]["hook"]
    assert entry["listeners"]["channel"] is None
    assert entry["listeners"]["follow"] is None
    assert entry["line"].endswith(", no channel, no follow")

    # A channel server of this session heartbeats (the real writer), and a hook delivers.
    write_heartbeat(
        "channel",
        "channel-key",
        workspace=project.ws,
        socket_path=project.daemon.socket,
        host_session_id="host-listen",
        session_id=session,
        ttl_ms=CHANNEL_TTL_MS,
    )
    project.prompt("host-listen", "go on")
    entry = session_entry(explain(project, "notes"), session)
    assert entry["listeners"]["hook"]["listening"] is True
    assert "lastDeliveryAt" in entry["listeners"]["hook"]
    assert entry["listeners"]["channel"]["listening"] is True
    assert "hook listening (seen " in entry["line"]
    assert "channel listening (seen " in entry["line"]

    # The channel went quiet a minute ago: past its TTL, so it no longer listens.
    path = Path(transports_dir()) / record_file_name("channel", "channel-key")
    record = json.loads(path.read_text())
    old = time.gmtime(time.time() - 60)
    record["updatedAt"] = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", old)
    scratch = path.with_suffix(".partial")
    scratch.write_text(json.dumps(record))
    os.replace(scratch, path)
    entry = session_entry(explain(project, "notes"), session)
    assert entry["listeners"]["channel"]["listening"] is False
    assert f"channel silent since {record['updatedAt']}" in entry["line"]

    # The agent started `events follow` for this session (the real writer's record).
    write_heartbeat(
        "follow",
        "follow-key",
        workspace=project.ws,
        socket_path=project.daemon.socket,
        host_session_id="host-listen",
        session_id=session,
        ttl_ms=FOLLOW_TTL_MS,
    )
    entry = session_entry(explain(project, "notes"), session)
    assert entry["listeners"]["follow"]["listening"] is True
    assert "follow listening (seen " in entry["line"]
