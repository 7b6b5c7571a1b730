"""Every listing an agent reads that leaves something out says how much, and how to see it.

A real database holds the events (written through ``materialize``, as the daemon writes
them), a real daemon serves it, and the real CLI is run as an agent would run it. Each
test then runs the command the cut listing names and checks that it shows the rest.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sqlite3
import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.clock import ManualClock
from agentmonitors.delivery.projection import project_event
from agentmonitors.delivery.service import DeliveryService
from agentmonitors.monitor.model import UrgencyBand
from agentmonitors.runtime.materialize import materialize
from agentmonitors.runtime.notify import CapturedMonitor, envelope_for
from agentmonitors.sources.observation import Observation
from agentmonitors.store.database import Database
from tests.conftest import CliResult
from tests.daemon.clocked import START_MS, ClockedDaemon
from tests.transports.clocked_project import NOTES, Project, Run

pytestmark = pytest.mark.slow

Batch = tuple[str, str, Iterable[Observation]]  # monitor id, urgency, observations


def write_store(db_path: str, workspace: str, batches: Iterable[Batch]) -> str:
    """A session of the workspace with these observations as unread events; its id."""
    clock = ManualClock(START_MS - 3_600_000)
    db = Database(db_path)
    service = DeliveryService(db, clock)
    session = str(service.open_session("host-cuts", workspace_path=workspace)["id"])
    with db.write() as conn:
        for batch in batches:
            store_batch(conn, clock, workspace, batch)
    db.close()
    return session


def store_batch(conn: sqlite3.Connection, clock: ManualClock, workspace: str, batch: Batch) -> None:
    """Store a batch's observations as events, a second apart, as the daemon would."""
    monitor_id, urgency, observations = batch
    monitor = CapturedMonitor(
        id=monitor_id,
        display_name=monitor_id,
        file_path=f"{workspace}/.claude/monitors/{monitor_id}/MONITOR.md",
        instructions="Look.",
        source_name="scripted",
        name=None,
        band=UrgencyBand(urgency, urgency),
        baseline_strategy="incremental",
        tags=(),
    )
    for observation in observations:
        clock.advance(1000)
        envelope = envelope_for(monitor, observation, clock.now_ms())
        materialize(conn, envelope, workspace, clock.now_ms(), project_event)


@pytest.fixture
def served(
    isolated_environment: Path, run_cli: Run, tmp_path: Path
) -> Iterator[tuple[Path, ClockedDaemon]]:
    assert run_cli("init", "--enable-only").code == 0
    # One file monitor, whose first observation tells the test the daemon is up.
    folder = isolated_environment / ".claude" / "monitors" / "notes"
    folder.mkdir(parents=True)
    (folder / "MONITOR.md").write_text(NOTES)
    (isolated_environment / "notes").mkdir()
    daemon = ClockedDaemon(isolated_environment, tmp_path / "clock")
    yield isolated_environment, daemon
    if daemon.process is not None:
        daemon.stop()


def cli(*args: str) -> CliResult:
    """The installed command, run by an agent (its default format is TOON)."""
    done = subprocess.run(
        [sys.executable, "-m", "agentmonitors", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "PWD": os.getcwd(), "CLAUDECODE": "1"},
    )
    return CliResult(done.returncode, done.stdout, done.stderr)


def as_json(*args: str) -> Any:
    result = cli(*args, "--format", "json")
    assert result.code == 0, result.err
    return json.loads(result.out)


def suggested(line: str) -> list[str]:
    """The command a closing line names between backticks, as argv."""
    found = re.search(r"`(agentmonitors [^`]+)`", line)
    assert found is not None, line
    return shlex.split(found.group(1))[1:]


def test_inspect_says_how_many_received_and_pending_it_left_out_and_how_each_was_delivered(
    served: tuple[Path, ClockedDaemon],
) -> None:
    root, daemon = served
    lows = [Observation(title=f"Low {n}", object_key=f"low{n}") for n in range(19)]
    normals = [Observation(title=f"Normal {n}", object_key=f"n{n}") for n in range(25)]
    session = write_store(daemon.db, str(root), [("lint", "low", lows), ("ci", "normal", normals)])
    daemon.start()
    # The 19 low events reach the session as the end-of-turn reminder; 3 are then acknowledged.
    claim = cli("hook", "claim", "--session", session, "--lifecycle", "turn-idle")
    assert claim.code == 0, claim.err
    low_ids = [
        row[0] for row in daemon.query("SELECT id FROM monitor_events WHERE monitor_id = 'lint'")
    ]
    acked = cli("events", "ack", "--session", session, "--event-ids", ",".join(low_ids[:3]))
    assert acked.code == 0, acked.err

    text = cli("inspect", "--session", session, "--format", "text")
    assert text.code == 0, text.err
    lines = text.out.splitlines()
    assert "  Received: 19 (16 claimed, 3 acknowledged)" in lines
    received = lines[lines.index("  Received: 19 (16 claimed, 3 acknowledged)") + 1 :]
    listed = [line for line in received[:10] if "lint" in line]
    assert len(listed) == 10
    assert all("delivered at turn-idle (reminder)" in line for line in listed), listed
    more = received[10]
    assert more.startswith("    … and 9 more received; `agentmonitors inspect --session ")
    assert "  Pending: 25" in lines
    pending_more = [line for line in lines if "more pending" in line]
    assert len(pending_more) == 1 and "… and 5 more pending" in pending_more[0]

    # The command it names lists all of them.
    every = cli(*suggested(more), "--format", "text")
    assert every.code == 0, every.err
    assert sum("at turn-idle (reminder)" in line for line in every.out.splitlines()) == 19
    assert sum("Normal " in line for line in every.out.splitlines()) == 25
    assert "more received" not in every.out and "more pending" not in every.out

    # JSON says it with counts, and names each event's lifecycle.
    report = as_json("inspect", "--session", session)
    (mine,) = report["sessions"]
    assert (mine["received"]["count"], mine["received"]["omitted"]) == (19, 9)
    assert len(mine["received"]["events"]) == 10
    assert {item["lifecycle"] for item in mine["received"]["events"]} == {"turn-idle"}
    assert {item["deliveredAs"] for item in mine["received"]["events"]} == {"reminder"}
    assert (mine["pending"]["count"], mine["pending"]["omitted"]) == (25, 5)
    whole = as_json("inspect", "--session", session, "--all")["sessions"][0]
    assert (len(whole["received"]["events"]), whole["received"]["omitted"]) == (19, 0)
    assert (len(whole["pending"]["events"]), whole["pending"]["omitted"]) == (25, 0)
    few = as_json("inspect", "--session", session, "--limit", "4")["sessions"][0]
    assert (len(few["received"]["events"]), few["received"]["omitted"]) == (4, 15)
    assert (len(few["pending"]["events"]), few["pending"]["omitted"]) == (4, 21)

    # TOON (an agent's default) carries the same counts.
    toon = cli("inspect", "--session", session)
    assert toon.code == 0, toon.err
    assert "omitted: 9" in toon.out and "lifecycle" in toon.out

    # With the daemon down, the same answer comes from the store.
    daemon.stop()
    offline = cli("inspect", "--session", session, "--format", "text")
    assert offline.code == 0, offline.err
    assert "… and 9 more received" in offline.out


def test_inspect_names_the_lifecycle_of_each_delivery_and_an_ack_without_one(
    served: tuple[Path, ClockedDaemon],
) -> None:
    root, daemon = served
    highs = [Observation(title=f"High {n}", object_key=f"h{n}") for n in range(2)]
    normals = [Observation(title="Normal", object_key="n")]
    lows = [Observation(title=f"Low {n}", object_key=f"l{n}") for n in range(2)]
    session = write_store(
        daemon.db,
        str(root),
        [("alerts", "high", highs), ("ci", "normal", normals), ("lint", "low", lows)],
    )
    daemon.start()
    # The high events, settled long ago, come with the coalesced normal reminder.
    claim = cli("hook", "claim", "--session", session, "--lifecycle", "turn-interruptible")
    assert claim.code == 0 and json.loads(claim.out)["coalescedReminder"], claim.out
    low_ids = [
        row[0] for row in daemon.query("SELECT id FROM monitor_events WHERE monitor_id = 'lint'")
    ]
    assert cli("events", "ack", "--session", session, "--event-ids", low_ids[0]).code == 0
    assert cli("hook", "claim", "--session", session, "--lifecycle", "turn-idle").code == 0

    def delivered() -> dict[str, tuple[str, str | None, str | None]]:
        (mine,) = as_json("inspect", "--session", session)["sessions"]
        return {
            item["title"]: (item["state"], item["lifecycle"], item["deliveredAs"])
            for item in mine["received"]["events"]
        }

    assert delivered() == {
        "High 0": ("claimed", "turn-interruptible", "event"),
        "High 1": ("claimed", "turn-interruptible", "event"),
        "Normal": ("claimed", "turn-interruptible", "reminder"),
        "Low 0": ("acknowledged", None, None),
        "Low 1": ("claimed", "turn-idle", "reminder"),
    }
    text = cli("inspect", "--session", session, "--format", "text").out
    assert "claimed delivered at turn-interruptible (event)  High 0" in text
    assert "claimed delivered at turn-interruptible (reminder)  Normal" in text
    assert "acknowledged without being delivered  Low 0" in text
    assert "claimed delivered at turn-idle (reminder)  Low 1" in text

    # A recap after a compaction claims every unacknowledged row again: each names the
    # latest delivery point that surfaced it.
    assert cli("hook", "claim", "--session", session, "--lifecycle", "post-compact").code == 0
    assert delivered() == {
        "High 0": ("claimed", "post-compact", "recap"),
        "High 1": ("claimed", "post-compact", "recap"),
        "Normal": ("claimed", "post-compact", "recap"),
        "Low 0": ("acknowledged", None, None),
        "Low 1": ("claimed", "post-compact", "recap"),
    }
    assert "more received" not in text


def test_summary_and_an_ambiguous_snapshot_say_how_many_objects_they_left_out(
    served: tuple[Path, ClockedDaemon],
) -> None:
    root, daemon = served
    builds = [
        Observation(title=f"Build {n}", object_key=f"b{n:02}", snapshot_text=f"build {n}\n")
        for n in range(55)
    ]
    write_store(daemon.db, str(root), [("build", "low", builds)])
    daemon.start()

    summary = cli("summary", "build", "--format", "text")
    assert summary.code == 0, summary.err
    lines = summary.out.splitlines()
    assert lines[0] == "build: 55 object(s) with events"
    assert len(lines) == 1 + 20 + 1
    assert lines[-1].startswith("… and 35 more object(s); `agentmonitors summary build --all`")
    every = cli(*suggested(lines[-1]), "--format", "text")
    assert every.code == 0, every.err
    assert len(every.out.splitlines()) == 1 + 55
    assert as_json("summary", "build")["moreObjects"] == 35
    assert as_json("summary", "build", "--limit", "50")["moreObjects"] == 5
    assert as_json("summary", "build", "--all")["moreObjects"] == 0

    # Several objects and none named: the keys, how many were left out, and where the rest are.
    ambiguous = cli("snapshot", "build", "--format", "text")
    assert ambiguous.code == 1
    # The keys to choose from are the answer (stdout); the reason is the one stderr line.
    assert ambiguous.err.startswith("error: Monitor build watches 55 objects")
    closing = ambiguous.out.splitlines()[-1]
    assert closing.startswith("  … and 5 more; `agentmonitors summary build --all`"), closing
    assert as_json_error("snapshot", "build")["moreObjectKeys"] == 5

    # A key that is not there names the ones that are, and how many it did not name.
    missing = cli("snapshot", "build", "--object", "nope", "--format", "text")
    assert missing.code == 1
    assert "and 5 more; `agentmonitors summary build --all` lists them" in missing.err


def as_json_error(*args: str) -> Any:
    result = cli(*args, "--format", "json")
    assert result.code == 1, result.out
    return json.loads(result.out)


def test_a_long_snapshot_says_what_it_cut_and_the_offset_that_shows_the_rest(
    served: tuple[Path, ClockedDaemon],
) -> None:
    root, daemon = served
    content = "".join(f"line {n:05}\n" for n in range(3000))  # 33,000 characters
    write_store(
        daemon.db,
        str(root),
        [("page", "low", [Observation(title="Page", object_key="p", snapshot_text=content)])],
    )
    daemon.start()

    first = cli("snapshot", "page", "--format", "text")
    assert first.code == 0, first.err
    head, *_, closing = first.out.splitlines()
    assert head.endswith("· characters 1–16,000 of 33,000")
    assert closing == (
        "… 17,000 more characters; `agentmonitors snapshot page --object p --offset 16000`"
        " shows the next part"
    )
    second = cli(*suggested(closing), "--format", "text")
    assert second.code == 0, second.err
    third = cli(*suggested(second.out.splitlines()[-1]), "--format", "text")
    assert third.code == 0, third.err
    assert third.out.splitlines()[0].endswith("· characters 32,001–33,000 of 33,000")
    assert "more characters" not in third.out

    pages = [as_json("snapshot", "page", "--offset", str(at)) for at in (0, 16000, 32000)]
    assert "".join(page["content"] for page in pages) == content
    assert [(p["offset"], p["remainingChars"], p["nextOffset"]) for p in pages] == [
        (0, 17000, 16000),
        (16000, 1000, 32000),
        (32000, 0, None),
    ]
    assert [p["truncated"] for p in pages] == [True, True, True]
    past = cli("snapshot", "page", "--offset", "40000", "--format", "text")
    assert past.code == 1 and "past the end of the snapshot" in past.err


def test_a_delivered_change_cut_to_fit_says_how_much_it_left_out_and_the_diff_that_shows_it(
    clocked_project: Project,
) -> None:
    project = clocked_project
    project.start_session("host-long-diff")
    project.settled_change("second\n")  # the first change after the baseline has no diff
    project.prompt("host-long-diff", "go on")
    # Short lines: the 20 shown and the command naming the (long) temporary path fit well
    # within what a delivered change shows, wherever the test runs.
    lines = [f"line {n:04}" for n in range(200)]
    event = project.settled_change("\n".join(lines) + "\n")

    out, _ = project.prompt("host-long-diff", "go on")
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    changes = context.split("\nChanges:\n", 1)[1].splitlines()
    # The stored diff stops at 20 changed lines and counts the others; the delivery names
    # the command that shows them.
    assert changes[-2] == "… 181 more changed lines elided"
    assert changes[-1] == (
        f"(`agentmonitors diff 'notes' --object '{project.root / 'notes' / 'a.txt'}'"
        f" --to '{event}' --all` shows it whole)"
    )
    whole = run_in(project.root, *suggested(changes[-1]), "--format", "json")
    # The final newline ends line 200; it starts no empty line 201.
    assert json.loads(whole)["diff"].splitlines()[-1] == "+ 200: line 0199"

    # The diff verb cuts the same way, says so, and says how to see the rest.
    key = str(project.root / "notes" / "a.txt")
    text = run_in(project.root, "diff", "notes", "--object", key, "--to", event, "--format", "text")
    assert text.splitlines()[-2:] == [
        "… 181 more changed lines elided",
        "(run again with --all to see every change)",
    ]

    # A change longer than a delivery shows is cut there, saying how much it left out.
    wide = [f"{n:04} " + "x" * 70 for n in range(8)]
    event = project.settled_change("\n".join(wide) + "\n")
    out, _ = project.prompt("host-long-diff", "go on")
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    changes = context.split("\nChanges:\n", 1)[1]
    closing = changes.splitlines()[-1]
    stored = str(
        project.daemon.query("SELECT diff_text FROM monitor_events WHERE id = ?", event)[0][0]
    )
    shown = changes[: -len(closing) - 1]
    assert stored.startswith(shown)
    left_out = len(stored) - len(shown)
    assert closing.startswith(
        f"… ({left_out:,} more characters of this change; `agentmonitors diff"
    )
    assert closing.endswith(f"--to '{event}' --all` shows it whole)")
    whole_diff = json.loads(run_in(project.root, *suggested(closing), "--format", "json"))["diff"]
    assert whole_diff.startswith(shown)
    # Every line the delivery cut is there (the stored diff's own count line aside).
    assert set(stored.splitlines()[:-1]) < set(whole_diff.splitlines())


def run_in(folder: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "agentmonitors", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=folder,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_recap_says_how_many_unread_it_did_not_list_and_the_listing_shows_them(
    served: tuple[Path, ClockedDaemon],
) -> None:
    root, daemon = served
    builds = [Observation(title=f"Build {n}", object_key=f"b{n}") for n in range(13)]
    session = write_store(daemon.db, str(root), [("build", "normal", builds)])
    daemon.start()
    claim = cli("hook", "claim", "--session", session, "--lifecycle", "post-compact")
    assert claim.code == 0, claim.err
    lines = json.loads(claim.out)["message"].splitlines()
    assert lines[1:11] == [f"{n}. Build {n + 2}" for n in range(1, 11)]
    assert lines[11] == "… and 3 older unread not listed here."
    unread = lines[13]
    assert unread.endswith("--unread` for unread details.")
    listing = cli(*suggested(unread), "--format", "text")
    assert listing.code == 0, listing.err
    assert sum("Build " in line for line in listing.out.splitlines()) == 13
