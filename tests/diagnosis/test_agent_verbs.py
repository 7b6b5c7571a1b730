"""``snapshot``, ``diff``, ``summary`` and ``inspect`` against a real daemon.

A real daemon with a test-set clock over a real project; sessions opened by the real
SessionStart hook, prompts through the real ``hook deliver``, the verbs through the
real CLI in a subprocess. Every verb leaves the delivery state byte-identical and
observes nothing.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.diff import build_diff
from tests.transports.clocked_project import Project, agentmonitors_in

pytestmark = pytest.mark.slow

# Every table a read could touch by mistake: delivery state, cursors, sessions, pacing,
# and what an observation writes (history, events, snapshots).
STATE_TABLES = (
    "session_event_state",
    "session_object_cursor",
    "agent_sessions",
    "monitor_state",
    "observation_history",
    "monitor_events",
    "monitor_snapshots",
)


@pytest.fixture
def project(clocked_project: Project) -> Project:
    """The clocked project, its daemon observing only when the test ticks it.

    Without file events no hint can start an observation behind the test's back, so an
    unchanged observation history proves that no verb observed.
    """
    clocked_project.daemon.stop()
    clocked_project.daemon.start(env={"AGENTMONITORS_NO_FILE_EVENTS": "1"})
    return clocked_project


def verb(project: Project, *args: str) -> tuple[int, str, str]:
    return agentmonitors_in(project.root, *args)


def verb_json(project: Project, *args: str) -> Any:
    code, out, err = verb(project, *args, "--format", "json")
    assert code == 0, (out, err)
    return json.loads(out)


def state(db: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the state tables, in a stable order."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return {
            table: conn.execute(f"SELECT * FROM {table} ORDER BY id").fetchall()
            for table in STATE_TABLES
        }
    finally:
        conn.close()


def snapshots(project: Project, event_id: str) -> str:
    rows = project.daemon.query(
        "SELECT content FROM monitor_snapshots WHERE event_id = ?", event_id
    )
    assert len(rows) == 1, rows
    return str(rows[0][0])


def event_column(project: Project, event_id: str, column: str) -> Any:
    return project.daemon.query(f"SELECT {column} FROM monitor_events WHERE id = ?", event_id)[0][0]


def test_snapshot_diff_summary_answer_from_the_store_and_change_nothing(project: Project) -> None:
    session = project.start_session("host-verbs")
    first = project.settled_change("second\n")
    second = project.settled_change("third\n")
    key = event_column(project, second, "object_key")
    before = state(project.daemon.db)

    # snapshot: the latest stored text, no --object needed for a single object.
    shot = verb_json(project, "snapshot", "notes")
    assert (shot["objectKey"], shot["eventId"], shot["content"]) == (key, second, "third\n")
    assert shot["truncated"] is False

    # diff between two event ids = the runtime diff of their stored snapshots, which is
    # the diff the second event was delivered with.
    between = verb_json(project, "diff", "notes", "--object", key, "--from", first, "--to", second)
    expected = build_diff(snapshots(project, first), snapshots(project, second), None)
    assert between["diff"] == expected == event_column(project, second, "diff_text")
    assert between["changed"] is True
    assert (between["from"]["eventId"], between["to"]["eventId"]) == (first, second)
    # A time resolves to the snapshot taken at or just before it.
    at = time.strftime(
        "%Y-%m-%dT%H:%M:%SZ", time.gmtime(event_column(project, second, "created_at") - 1)
    )
    by_time = verb_json(project, "diff", "notes", "--object", key, "--from", at)
    assert (by_time["from"]["kind"], by_time["from"]["eventId"]) == ("time", first)
    assert by_time["diff"] == expected

    # diff with --session and no --from starts at the session's cursor (what it was shown).
    cursor = project.daemon.query(
        "SELECT baseline_content FROM session_object_cursor WHERE session_id = ?", session
    )[0][0]
    mine = verb_json(project, "diff", "notes", "--object", key, "--session", session)
    assert mine["from"]["kind"] == "session-baseline"
    assert mine["diff"] == build_diff(cursor, "third\n", None)
    assert mine["to"] == {**mine["to"], "kind": "latest", "eventId": second}

    # summary: facets and the session's counts, never a snapshot or a diff.
    summary = verb_json(project, "summary", "notes", "--session", session)
    (item,) = summary["objects"]
    assert item["objectKey"] == key and item["latestEventId"] == second
    assert (item["events"], item["unread"], item["claimed"], item["urgency"]) == (2, 2, 0, "high")
    assert "third" not in json.dumps(summary)

    # text renderings answer too
    code, out, _ = verb(project, "diff", "notes", "--object", key, "--format", "text")
    assert code == 0 and "+ 1: third" in out

    assert state(project.daemon.db) == before  # byte-identical, nothing observed
    # Both events are still deliverable: the reads claimed nothing.
    assert project.states("host-verbs") == {first: "unread", second: "unread"}


def test_bad_points_unknown_ids_and_ambiguous_objects_are_explicit_errors(project: Project) -> None:
    first = project.settled_change("second\n")
    project.settled_change("third\n")
    key = event_column(project, first, "object_key")
    conn = sqlite3.connect(project.daemon.db)
    with conn:  # the first event's snapshot is pruned
        conn.execute("DELETE FROM monitor_snapshots WHERE event_id = ?", (first,))
    conn.close()
    before = state(project.daemon.db)

    code, out, err = verb(project, "diff", "notes", "--object", key, "--from", first)
    assert code == 1 and out == ""
    assert err.startswith(f"error: --from {first}: ") and "pruned" in err

    code, out, _ = verb(
        project,
        "diff",
        "notes",
        "--object",
        key,
        "--from",
        "2001-01-01T00:00:00Z",
        "--format",
        "json",
    )
    assert code == 1
    assert "no snapshot of" in json.loads(out)["error"]

    code, _, err = verb(project, "diff", "notes", "--object", key, "--from", "not-a-point")
    assert code == 1 and "not-a-point" in err and "ISO-8601" in err

    code, _, err = verb(project, "snapshot", "nope")
    assert code == 1 and 'Unknown monitor id "nope"' in err

    code, _, err = verb(project, "summary", "notes", "--session", "01NOSUCHSESSION")
    assert code == 1 and "Session not found: 01NOSUCHSESSION" in err

    code, _, err = verb(project, "snapshot", "ephemeral:01NOSUCHSESSION/01X")
    assert code == 1 and "ephemeral:01NOSUCHSESSION/01X was not found" in err

    # A second object makes --object necessary: the keys are listed, nothing is guessed.
    (project.root / "notes" / "b.txt").write_text("other\n")
    for _ in range(4):
        project.daemon.advance(31)
        project.daemon.tick()
    code, out, err = verb(project, "snapshot", "notes")
    # The keys to choose from on stdout; the one reason line on stderr.
    assert code == 1 and key in out
    assert err.startswith("error: ") and "watches 2 objects" in err
    code, out, _ = verb(project, "snapshot", "notes", "--format", "json")
    assert code == 1
    listed = json.loads(out)["objectKeys"]
    assert len(listed) == 2 and key in listed
    (other,) = [item for item in listed if item != key]
    other_event = project.daemon.query("SELECT id FROM monitor_events WHERE object_key = ?", other)[
        0
    ][0]
    code, _, err = verb(project, "diff", "notes", "--object", key, "--to", other_event)
    assert code == 1 and f'"{other}", not notes' in err

    after = state(project.daemon.db)
    assert {table: after[table] for table in ("session_event_state", "session_object_cursor")} == {
        table: before[table] for table in ("session_event_state", "session_object_cursor")
    }


def test_the_verbs_read_the_store_read_only_without_a_daemon(project: Project) -> None:
    project.start_session("host-offline")
    earlier = project.settled_change("second\n")
    event = project.settled_change("third\n")
    key = event_column(project, event, "object_key")
    project.daemon.stop()
    db = Path(project.daemon.db)
    files = {path.name: path.read_bytes() for path in db.parent.iterdir() if path.is_file()}

    started = time.monotonic()
    shot = verb_json(project, "snapshot", "notes", "--object", key)
    assert shot["content"] == "third\n"
    changed = verb_json(project, "diff", "notes", "--object", key, "--to", event)
    assert changed["diff"] == event_column(project, event, "diff_text")
    summary = verb_json(project, "summary", "notes")
    assert summary["objects"][0]["unread"] is None  # no session named: no counts
    report = verb_json(project, "inspect")
    (only,) = report["sessions"]
    assert [item["eventId"] for item in only["pending"]["events"]] == [earlier, event]
    assert time.monotonic() - started < 30  # answers at once: nothing waits for a change

    # Not a byte of the database (or a new file beside it) changed.
    assert {path.name: path.read_bytes() for path in db.parent.iterdir() if path.is_file()} == files


def test_an_unknown_monitor_without_a_database_is_an_error(project: Project) -> None:
    project.daemon.stop()
    Path(project.daemon.db).unlink()
    code, _, err = verb(project, "snapshot", "notes")
    assert code == 1 and err.startswith("error: Nothing is stored for ")
    assert not Path(project.daemon.db).exists()


DIGEST = """---
watch:
  type: file-fingerprint
  globs: "digest/*.txt"
urgency: normal
notify:
  strategy: debounce
  settle-for: 10m
---
Read the digest.
"""


def buckets(project: Project, session: str) -> dict[str, Any]:
    report = verb_json(project, "inspect", "--session", session)
    (entry,) = report["sessions"]
    assert entry["sessionId"] == session
    return dict(entry)


def bucket_of(entry: dict[str, Any], event_id: str) -> list[str]:
    """The buckets that name ``event_id`` (exactly one, when all is well)."""
    found = []
    if any(item["eventId"] == event_id for item in entry["received"]["events"]):
        found.append("received")
    if any(item["eventId"] == event_id for item in entry["pending"]["events"]):
        found.append("pending")
    if any(event_id in item.get("eventIds", ()) for item in entry["armed"]["entries"]):
        found.append("armed")
    return found


def test_a_debounced_change_goes_armed_then_pending_then_received(project: Project) -> None:
    folder = project.root / ".claude" / "monitors" / "digest"
    folder.mkdir(parents=True)
    (folder / "MONITOR.md").write_text(DIGEST)
    (project.root / "digest").mkdir()
    (project.root / "digest" / "a.txt").write_text("first\n")
    session = project.start_session("host-digest")
    project.daemon.advance(31)
    project.daemon.tick()  # baseline
    (project.root / "digest" / "a.txt").write_text("second\n")
    project.daemon.advance(31)
    project.daemon.tick()  # observed, held by the 10 min debounce
    notify = json.loads(
        project.daemon.query("SELECT notify_state FROM monitor_state WHERE monitor_id = 'digest'")[
            0
        ][0]
    )
    due = notify["pendingDebounce"]["dueAt"]

    before = state(project.daemon.db)
    armed = buckets(project, session)
    assert state(project.daemon.db) == before
    (hold,) = [item for item in armed["armed"]["entries"] if item["monitorIds"] == ["digest"]]
    assert (hold["reason"], hold["observations"], hold["earliestFireAt"]) == ("debounce", 1, due)
    assert hold["objectKeys"] == [str(project.root / "digest" / "a.txt")]
    assert armed["pending"]["count"] == 0 and armed["received"]["count"] == 0

    project.daemon.advance(10 * 60)
    project.daemon.tick()  # the window closes: the event is stored
    (event,) = [
        row[0]
        for row in project.daemon.query("SELECT id FROM monitor_events WHERE monitor_id = 'digest'")
    ]
    pending = buckets(project, session)
    assert bucket_of(pending, event) == ["pending"]
    (item,) = pending["pending"]["events"]
    assert item["deliverAt"] == "at the next prompt or tool call"
    assert not [entry for entry in pending["armed"]["entries"] if "digest" in entry["monitorIds"]]

    out, _ = project.prompt("host-digest", "go on")
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    # The reminder names the read-only verbs as the next step.
    assert f"`agentmonitors summary|snapshot|diff MONITOR --session {session}`" in context
    assert f"`agentmonitors inspect --session {session}`" in context
    received = buckets(project, session)
    assert bucket_of(received, event) == ["received"]
    assert received["received"]["events"][0]["state"] == "claimed"
    assert received["pending"]["count"] == 0


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


def test_a_settling_high_event_is_armed_until_it_settles(project: Project) -> None:
    folder = project.root / ".claude" / "monitors" / "alerts"
    folder.mkdir(parents=True)
    (folder / "MONITOR.md").write_text(ALERTS)
    (project.root / "alerts").mkdir()
    (project.root / "alerts" / "a.txt").write_text("first\n")
    session = project.start_session("host-alerts")
    project.daemon.advance(31)
    project.daemon.tick()
    (project.root / "alerts" / "a.txt").write_text("changed\n")
    project.daemon.advance(31)
    project.daemon.tick()  # stored at once (throttle), then settles 15 s before delivery
    (event, created) = project.daemon.query(
        "SELECT id, created_at FROM monitor_events WHERE monitor_id = 'alerts'"
    )[0]

    project.daemon.advance(5)
    armed = buckets(project, session)
    assert bucket_of(armed, event) == ["armed"]
    (hold,) = [item for item in armed["armed"]["entries"] if event in item.get("eventIds", ())]
    assert hold["reason"] == "settle-window"
    assert hold["earliestFireAt"] == time.strftime(
        "%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(created + 15)
    )

    project.daemon.advance(11)
    assert bucket_of(buckets(project, session), event) == ["pending"]
    out, _ = project.prompt("host-alerts", "go on")
    assert event in out
    assert bucket_of(buckets(project, session), event) == ["received"]


def test_inspect_without_a_session_covers_every_active_session(project: Project) -> None:
    one = project.start_session("host-one")
    two = project.start_session("host-two")
    event = project.settled_change("second\n")
    code, out, err = verb(project, "inspect", "--format", "text")
    assert code == 0, err
    assert f"Session {one} (active)" in out and f"Session {two} (active)" in out
    assert out.count(event) == 2 and "Pending: 1" in out
    code, _, err = verb(project, "inspect", "--session", "01NOSUCHSESSION")
    assert code == 1 and "Session not found: 01NOSUCHSESSION" in err


def test_an_ephemeral_monitor_is_read_like_a_file_monitor_by_its_own_session_only(
    project: Project,
) -> None:
    owner = project.start_session("host-owner")
    other = project.start_session("host-other")
    (project.root / "eph").mkdir()
    (project.root / "eph" / "a.txt").write_text("first\n")
    declared = verb_json(
        project, "watch", "file-fingerprint", "--session", owner, "--scope", "globs=eph/*.txt"
    )
    watch_id = declared["id"]
    for _ in range(3):
        project.daemon.advance(31)
        project.daemon.tick()
    (project.root / "eph" / "a.txt").write_text("second\n")
    events: list[tuple[Any, ...]] = []
    for _ in range(6):
        project.daemon.advance(31)
        project.daemon.tick()
        events = project.daemon.query(
            "SELECT id, object_key FROM monitor_events WHERE monitor_id = ?", watch_id
        )
        if events:
            break
    ((event, key),) = events
    before = state(project.daemon.db)

    shot = verb_json(project, "snapshot", watch_id, "--session", owner)
    assert (shot["objectKey"], shot["content"]) == (key, "second\n")
    summary = verb_json(project, "summary", watch_id, "--session", owner)
    assert summary["objects"][0]["unread"] == 1
    project.daemon.advance(16)
    report = buckets(project, owner)
    assert bucket_of(report, event) == ["pending"]

    code, _, err = verb(project, "snapshot", watch_id)
    assert code == 1 and f"--session {owner}" in err
    code, _, err = verb(project, "snapshot", watch_id, "--session", other)
    assert code == 1 and f"{watch_id} was not found for session {other}" in err
    assert not bucket_of(buckets(project, other), event)
    assert state(project.daemon.db) == before
