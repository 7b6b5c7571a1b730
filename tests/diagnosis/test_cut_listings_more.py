"""More listings that cut: each says how much it left out and how to see it.

A real database (rows written as the daemon writes them), a real daemon, and the real CLI.
Each test then runs the way the cut listing names and checks that it shows the rest.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentmonitors.store import queries
from agentmonitors.store.database import Database
from tests.daemon.clocked import START_MS, ClockedDaemon
from tests.diagnosis.test_cut_listings import as_json, cli, served, suggested, write_store

pytestmark = pytest.mark.slow

__all__ = ["served"]  # the fixture, shared with the listings' tests


def add_history(db_path: str, workspace: str, monitor_id: str, count: int) -> None:
    db = Database(db_path)
    with db.write() as conn:
        for n in range(count):
            queries.add_history(
                conn,
                monitor_id=monitor_id,
                workspace=workspace,
                source_name="scripted",
                result="no-change",
                data={"n": n},
                now_ms=START_MS - 3_600_000 + n * 1000,
            )
    db.close()


def test_monitor_history_says_how_many_observations_its_limit_left_out(
    served: tuple[Path, ClockedDaemon],
) -> None:
    root, daemon = served
    write_store(daemon.db, str(root), [])  # creates the store
    add_history(daemon.db, str(root), "lint", 57)
    daemon.start()

    for stopped in (False, True):  # the daemon answers, then the stored state
        if stopped:
            daemon.stop()
        text = cli("monitor", "history", "lint", "--format", "text")
        assert text.code == 0, text.err
        lines = text.out.splitlines()
        assert len(lines) == 50 + 1
        closing = lines[-1]
        assert closing == (
            "… and 7 more observations; `agentmonitors monitor history lint --limit 57` shows them"
        )
        every = cli(*suggested(closing), "--format", "text")
        assert every.code == 0, every.err
        assert len(every.out.splitlines()) == 57 and "more observation" not in every.out

        # JSON stays the bare array; the count is the notice on stderr.
        few = cli("monitor", "history", "lint", "--limit", "3", "--format", "json")
        assert few.code == 0, few.err
        assert len(json.loads(few.out)) == 3
        assert "… and 54 more observations; `agentmonitors monitor history lint --limit 57`" in (
            few.err
        )
        # TOON (an agent's default) closes with the same line.
        toon = cli("monitor", "history", "lint", "--limit", "56")
        assert toon.code == 0, toon.err
        assert toon.out.splitlines()[-1].startswith("… and 1 more observation; `")

    whole = cli("monitor", "history", "lint", "--limit", "57", "--format", "json")
    assert len(json.loads(whole.out)) == 57 and "more observation" not in whole.err


def test_events_list_as_json_says_on_stderr_how_many_its_limit_left_out(
    served: tuple[Path, ClockedDaemon],
) -> None:
    from agentmonitors.sources.observation import Observation

    root, daemon = served
    builds = [Observation(title=f"Build {n}", object_key=f"b{n}") for n in range(9)]
    session = write_store(daemon.db, str(root), [("build", "low", builds)])
    daemon.start()
    for stopped in (False, True):
        if stopped:
            daemon.stop()
        few = cli("events", "list", "--session", session, "--limit", "4", "--format", "json")
        assert few.code == 0, few.err
        assert len(json.loads(few.out)) == 4  # still the bare array
        closing = [line for line in few.err.splitlines() if "more" in line]
        assert closing == ["5 more; use --limit/--all"], few.err
        every = cli("events", "list", "--session", session, "--all", "--format", "json")
        assert len(json.loads(every.out)) == 9 and "more" not in every.err


def test_monitor_explain_says_how_many_observations_and_events_its_limits_left_out(
    served: tuple[Path, ClockedDaemon],
) -> None:
    from agentmonitors.sources.observation import Observation

    root, daemon = served
    notes = [Observation(title=f"Note {n}", object_key=f"n{n}") for n in range(4)]
    write_store(daemon.db, str(root), [("notes", "low", notes)])
    add_history(daemon.db, str(root), "notes", 6)
    daemon.start()
    observations = len(as_json("monitor", "history", "notes", "--limit", "1000"))
    assert observations >= 6

    report = as_json("monitor", "explain", "notes", "--history-limit", "2", "--event-limit", "1")
    assert (len(report["observations"]), report["moreObservations"]) == (2, observations - 2)
    assert (len(report["events"]), report["moreEvents"]) == (1, 3)
    command = f"--history-limit {observations} --event-limit 4"
    assert report["showMore"] == f"`agentmonitors monitor explain notes {command}` lists them all"
    whole = as_json(*suggested(report["showMore"]))
    assert (len(whole["observations"]), whole["moreObservations"]) == (observations, 0)
    assert (len(whole["events"]), whole["moreEvents"]) == (4, 0)
    assert "showMore" not in whole
    # TOON, an agent's default, carries the same counts.
    toon = cli("monitor", "explain", "notes", "--history-limit", "2", "--event-limit", "1")
    assert toon.code == 0, toon.err
    assert f"moreObservations: {observations - 2}" in toon.out and "moreEvents: 3" in toon.out
