"""``events list`` for an agent is bounded: a 20,000-event backlog cannot flood its context.

A real database file holds the backlog (written through ``materialize``, as the daemon
writes events), a real daemon serves it, and the real CLI lists it as an agent would.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from agentmonitors.cli.quick_commands import listed_page
from agentmonitors.clock import ManualClock
from agentmonitors.delivery.events import EventQuery, page_events
from agentmonitors.delivery.projection import project_event
from agentmonitors.delivery.service import DeliveryService
from agentmonitors.monitor.model import UrgencyBand
from agentmonitors.runtime.materialize import materialize
from agentmonitors.runtime.notify import CapturedMonitor, envelope_for
from agentmonitors.sources.observation import Observation
from agentmonitors.store.database import Database
from tests.conftest import CliResult
from tests.daemon.clocked import START_MS, ClockedDaemon
from tests.delivery.conftest import World
from tests.transports.clocked_project import NOTES, Run

BACKLOG = 20_000


def write_events(db_path: str, workspace: str, observations: Iterable[Observation]) -> str:
    """A session with these observations as unread events (oldest first); its id."""
    clock = ManualClock(START_MS - 3_600_000)
    db = Database(db_path)
    service = DeliveryService(db, clock)
    session = str(service.open_session("host-backlog", workspace_path=workspace)["id"])
    monitor = CapturedMonitor(
        id="build",
        display_name="build",
        file_path=f"{workspace}/.claude/monitors/build/MONITOR.md",
        instructions="Look at the build.",
        source_name="scripted",
        name=None,
        band=UrgencyBand("low", "low"),
        baseline_strategy="incremental",
        tags=(),
    )
    with db.write() as conn:
        for observation in observations:
            clock.advance(100)
            envelope = envelope_for(monitor, observation, clock.now_ms())
            materialize(conn, envelope, workspace, clock.now_ms(), project_event)
    db.close()
    return session


def project_with_events(
    root: Path, clock_file: Path, observations: Iterable[Observation]
) -> tuple[ClockedDaemon, str]:
    """An enabled project whose store holds these events, served by a real daemon."""
    folder = root / ".claude" / "monitors" / "notes"
    folder.mkdir(parents=True)
    (folder / "MONITOR.md").write_text(NOTES)
    (root / "notes").mkdir()
    daemon = ClockedDaemon(root, clock_file)
    session = write_events(daemon.db, str(root), observations)
    daemon.start()
    return daemon, session


@pytest.fixture
def backlog(isolated_environment: Path, run_cli: Run, tmp_path: Path) -> Iterator[tuple[str, str]]:
    assert run_cli("init", "--enable-only").code == 0
    builds = (
        Observation(title=f"Build {number} finished", object_key=f"b{number}")
        for number in range(BACKLOG)
    )
    daemon, session = project_with_events(isolated_environment, tmp_path / "clock", builds)
    yield session, daemon.socket
    daemon.stop()


def cli(*args: str, agent: bool = True) -> CliResult:
    env = {**os.environ, "PWD": os.getcwd()}
    if agent:
        env["CLAUDECODE"] = "1"
    done = subprocess.run(
        [sys.executable, "-m", "agentmonitors", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )
    return CliResult(done.returncode, done.stdout, done.stderr)


@pytest.mark.slow
def test_a_backlog_of_20000_events_lists_as_the_newest_50_and_says_what_is_left(
    backlog: tuple[str, str],
) -> None:
    session, socket = backlog
    where = ["--session", session, "--socket", socket]

    # The command the hook's reminder names, run under an agent: TOON, bounded.
    started = time.monotonic()
    toon = cli("events", "list", *where, "--unread")
    elapsed = time.monotonic() - started
    assert toon.code == 0, toon.err
    lines = toon.out.splitlines()
    assert lines[0].startswith("[50]{") or lines[0].startswith("[50]:")
    assert lines[-1] == f"{BACKLOG - 50} more; use --limit/--all"
    assert f"Build {BACKLOG - 1} finished" in toon.out  # newest first
    assert f"Build {BACKLOG - 51} finished" not in toon.out
    assert len(toon.out) < 64 * 1024

    text = cli("events", "list", *where, "--format", "text", agent=False)
    assert text.code == 0, text.err
    text_lines = text.out.splitlines()
    assert len(text_lines) == 1 + 50 + 1  # header, rows, closing line
    assert f"Build {BACKLOG - 1} finished" in text_lines[1]
    assert text_lines[-1] == f"{BACKLOG - 50} more; use --limit/--all"

    limited = cli("events", "list", *where, "--limit", "3", "--format", "text", agent=False)
    assert len(limited.out.splitlines()) == 1 + 3 + 1
    assert limited.out.splitlines()[-1] == f"{BACKLOG - 3} more; use --limit/--all"

    # Scripts asking for JSON get everything unless they limit it, and no closing line.
    everything = cli("events", "list", *where, "--format", "json")
    assert everything.code == 0, everything.err
    assert len(json.loads(everything.out)) == BACKLOG
    five = cli("events", "list", *where, "--format", "json", "--limit", "5")
    assert [record["title"] for record in json.loads(five.out)] == [
        f"Build {number} finished" for number in range(BACKLOG - 1, BACKLOG - 6, -1)
    ]

    whole = cli("events", "list", *where, "--all")
    assert whole.code == 0, whole.err
    assert whole.out.splitlines()[0].startswith(f"[{BACKLOG}]")
    assert "more; use --limit/--all" not in whole.out

    print(
        f"\nevents list --unread under an agent, {BACKLOG} unread events: "
        f"{len(toon.out.encode())} bytes, {len(lines)} lines in {elapsed:.2f} s "
        f"(--all: {len(whole.out.encode())} bytes)"
    )


def test_limit_and_all_together_are_a_usage_error(run_cli: Run) -> None:
    result = run_cli("events", "list", "--session", "s", "--limit", "5", "--all")
    assert result.code == 2
    assert result.out == ""
    assert result.err.splitlines()[0] == "error: --limit and --all cannot be used together."


@pytest.mark.parametrize("limit", ["0", "-1", "many"])
def test_a_bad_limit_names_the_flag(run_cli: Run, limit: str) -> None:
    result = run_cli("events", "list", "--session", "s", "--limit", limit)
    assert result.code == 2
    assert result.err.startswith("error: Invalid value for '--limit'")


def test_a_page_counts_only_what_the_tag_and_scope_filters_keep(tmp_path: Path) -> None:
    world = World(tmp_path)
    session = world.session()
    tagged = []
    for number in range(7):
        world.advance(1000)
        tags = ("ci",) if number % 2 == 0 else ()
        event = world.emit(title=f"Build {number}", tags=tags, scope={"n": str(number % 3)})
        if tags:
            tagged.append(event)
    with world.db.read() as conn:
        page = page_events(conn, EventQuery(session_id=session, tags=("ci",)), 2)
        assert [record["id"] for record in page.records] == tagged[::-1][:2]
        assert page.total == len(tagged) == 4
        scoped = page_events(conn, EventQuery(session_id=session, scope={"n": "0"}), 1)
        assert (len(scoped.records), scoped.total) == (1, 3)  # builds 0, 3 and 6
        everything = page_events(conn, EventQuery(session_id=session), None)
        assert (len(everything.records), everything.total) == (7, 7)
    world.db.close()


def test_a_daemon_that_ignores_limit_is_cut_on_the_client() -> None:
    # Such a daemon answers the whole array; the listing is still bounded.
    rows = [{"id": str(number)} for number in range(5)]
    assert listed_page(rows, 2) == (rows[:2], 5)
    assert listed_page(rows, None) == (rows, 5)
    assert listed_page({"events": rows[:1], "total": 9}, 1) == (rows[:1], 9)
