"""Silence and failures are news: the liveness events a tick raises (runtime/liveness.py).

Driven by the manual clock over a real SQLite store: nothing here sleeps. A restart is a
new runtime over the same database, so what these tests see after one is what a
restarted daemon reads back from the stored rows.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.sources.observation import Observation, ObservationResult
from agentmonitors.store import queries
from agentmonitors.store.liveness import HEALTH_KEY, SILENCE_KEY
from tests.runtime.test_tick import START, Harness, write_monitor

HOUR = 3_600_000
EXPECTING = (
    "name: CI heartbeat\nwatch:\n  type: scripted\n  interval: 10m\nexpect:\n  change-within: 2h\n"
)


@pytest.fixture
def harness(tmp_path: Path) -> Harness:
    root = tmp_path / "ws"
    (root / ".claude" / "monitors").mkdir(parents=True)
    h = Harness(root, tmp_path / "monitors.db")
    yield h
    h.db.close()


def events(harness: Harness) -> list[dict[str, Any]]:
    return harness.rows(
        "SELECT title, object_key, urgency, query_scope, body FROM monitor_events ORDER BY id"
    )


def titles(harness: Harness) -> list[str]:
    return [row["title"] for row in events(harness)]


def change(title: str = "beat") -> ObservationResult:
    return ObservationResult([Observation(title=title, object_key="ci")], next_state={"n": 1})


def quiet() -> ObservationResult:
    return ObservationResult([], next_state={"n": 1})


def observe_now(harness: Harness, result: ObservationResult, monitor_id: str = "ci") -> None:
    """Observe the monitor now, as a file hint makes the daemon do."""
    harness.source.queue.append(result)
    assert harness.tick(monitor_id).evaluated_monitors == [monitor_id]


def run_until(harness: Harness, until_ms: int, results: list[ObservationResult]) -> None:
    """Tick at every wake the runtime asks for, up to ``until_ms``, each observation
    answered with the next of ``results`` (then nothing changed)."""
    while True:
        harness.source.queue.append(results.pop(0) if results else quiet())
        result = harness.tick()
        if not result.evaluated_monitors:
            harness.source.queue.pop()
        wake = result.next_wake_ms
        assert wake is not None
        if wake > until_ms:
            return
        harness.clock.set(max(wake, harness.clock.now_ms() + 1))


def test_a_monitor_silent_for_its_window_raises_one_event_per_silence(harness: Harness) -> None:
    write_monitor(harness.workspace, "ci", EXPECTING)
    run_until(harness, START + 2 * HOUR - 1, [])  # the baseline starts the window
    assert titles(harness) == []
    run_until(harness, START + 5 * HOUR, [])
    assert titles(harness) == ["CI heartbeat has not changed in 2h"]
    (silence,) = events(harness)
    assert silence["object_key"] == SILENCE_KEY
    assert silence["urgency"] == "normal"
    assert json.loads(silence["query_scope"]) == {"liveness": "silent"}

    # A real change ends the silence; the next silence raises one again.
    harness.clock.set(START + 5 * HOUR + 1000)
    observe_now(harness, change())
    run_until(harness, START + 6 * HOUR, [])
    assert titles(harness)[1:] == ["CI heartbeat"]
    run_until(harness, START + 9 * HOUR, [])
    assert titles(harness)[2:] == ["CI heartbeat has not changed in 2h"]


def test_the_silence_deadline_wakes_the_tick_though_nothing_else_is_due(
    harness: Harness,
) -> None:
    write_monitor(
        harness.workspace,
        "ci",
        "watch:\n  type: scripted\n  interval: 1d\nexpect:\n  change-within: 90m\n",
    )
    harness.source.queue.append(quiet())
    assert harness.tick().next_wake_ms == START + 90 * 60_000
    harness.clock.set(START + 90 * 60_000)
    assert harness.tick().evaluated_monitors == []
    assert titles(harness) == ["ci has not changed in 1h 30m"]


def test_a_restart_neither_forgets_nor_repeats_a_silence(harness: Harness) -> None:
    write_monitor(harness.workspace, "ci", EXPECTING)
    run_until(harness, START + HOUR, [])
    harness.db.close()
    harness.restart()
    # The window started at the stored baseline, not at the restart.
    run_until(harness, START + 2 * HOUR + 60_000, [])
    assert titles(harness) == ["CI heartbeat has not changed in 2h"]
    harness.db.close()
    harness.restart()
    run_until(harness, START + 10 * HOUR, [])
    assert titles(harness) == ["CI heartbeat has not changed in 2h"]


def test_a_silence_event_never_collapses_into_a_change_of_an_object(harness: Harness) -> None:
    write_monitor(harness.workspace, "ci", EXPECTING)
    run_until(harness, START + 3 * HOUR, [])
    harness.clock.set(START + 3 * HOUR + 1000)
    observe_now(harness, change())
    keys = [row["object_key"] for row in events(harness)]
    assert keys == [SILENCE_KEY, "ci"]
    # A silence has no snapshot: nothing to diff, never grouped with an object's versions.
    snapshots = harness.rows("SELECT object_key FROM monitor_snapshots")
    assert SILENCE_KEY not in {row["object_key"] for row in snapshots}


FAILING = "name: Docs changed\nwatch:\n  type: scripted\n  interval: 10s\n"


def fail_times(harness: Harness, count: int, reason: str = "exit status 2") -> None:
    """``count`` failed observations, each at the tick the backoff next allows."""
    failed = 0
    while failed < count:
        harness.source.queue.append(ObservationResult([], failure=reason))
        result = harness.tick()
        if result.evaluated_monitors == ["docs"]:
            failed += 1
        else:
            harness.source.queue.clear()
        assert result.next_wake_ms is not None
        harness.clock.set(result.next_wake_ms)


def test_three_failures_in_a_row_raise_one_event_and_recovery_one_more(
    harness: Harness,
) -> None:
    write_monitor(harness.workspace, "docs", FAILING)
    fail_times(harness, 2)
    assert titles(harness) == []
    fail_times(harness, 1)
    assert titles(harness) == ["Docs changed has failed 3 times: exit status 2"]
    fail_times(harness, 4)
    assert len(titles(harness)) == 1
    observe_now(harness, quiet(), "docs")
    assert titles(harness)[1:] == ["Docs changed recovered after 7 failures"]
    rows = events(harness)
    assert {row["object_key"] for row in rows} == {HEALTH_KEY}
    assert "exit status 2" in rows[0]["body"]
    # Healthy again: a later failing run raises again, once.
    harness.clock.set(harness.clock.now_ms() + 60_000)
    fail_times(harness, 3, "boom")
    assert titles(harness)[2:] == ["Docs changed has failed 3 times: boom"]


def test_a_raised_error_counts_as_a_failure_too(harness: Harness) -> None:
    write_monitor(harness.workspace, "docs", FAILING)
    for _ in range(3):
        harness.source.queue.append(RuntimeError("upstream\nis down\u202e"))
        result = harness.tick()
        assert result.next_wake_ms is not None
        harness.clock.set(result.next_wake_ms)
    # One line, escaped as untrusted text.
    assert titles(harness) == ["Docs changed has failed 3 times: upstream is down\\u202e"]


def test_a_long_reason_is_bounded_in_the_title_and_kept_in_the_body(harness: Harness) -> None:
    write_monitor(harness.workspace, "docs", FAILING)
    fail_times(harness, 3, "x" * 5000)
    (row,) = events(harness)
    assert len(row["title"]) < 220
    assert row["title"].endswith("…")
    assert "x" * 1900 in row["body"]


def test_the_failure_count_survives_a_restart(harness: Harness) -> None:
    write_monitor(harness.workspace, "docs", FAILING)
    fail_times(harness, 2)
    harness.db.close()
    harness.restart()
    fail_times(harness, 1)
    assert titles(harness) == ["Docs changed has failed 3 times: exit status 2"]
    harness.db.close()
    harness.restart()
    fail_times(harness, 2)
    assert len(titles(harness)) == 1
    harness.db.close()
    harness.restart()
    harness.clock.set(harness.clock.now_ms() + 3_600_000)
    observe_now(harness, quiet(), "docs")
    assert titles(harness)[1:] == ["Docs changed recovered after 5 failures"]


def test_a_healthy_monitor_reads_no_history_for_liveness(harness: Harness) -> None:
    """Once a monitor is known healthy, each observation costs liveness nothing."""
    write_monitor(harness.workspace, "docs", FAILING)
    harness.source.queue.append(quiet())
    harness.tick()
    assert harness.runtime.liveness._runs == {"docs": 0}


def test_a_failing_run_whose_event_was_lost_is_said_once_at_its_next_failure(
    harness: Harness,
) -> None:
    """Three failures stored and their event not (a crash between the two, or a run
    that began before this version): the next failure says it, once."""
    write_monitor(harness.workspace, "docs", FAILING)
    with harness.db.write() as conn:
        for step in range(3):
            queries.add_history(
                conn,
                monitor_id="docs",
                workspace=str(harness.workspace),
                source_name="scripted",
                result="errored",
                data={"error": "down"},
                now_ms=START - (3 - step) * 60_000,
            )
    fail_times(harness, 1)
    assert titles(harness) == ["Docs changed has failed 4 times: exit status 2"]
    fail_times(harness, 2)
    assert len(titles(harness)) == 1
    observe_now(harness, quiet(), "docs")
    assert titles(harness)[1:] == ["Docs changed recovered after 6 failures"]


def test_a_short_failing_run_says_nothing_either_way(harness: Harness) -> None:
    write_monitor(harness.workspace, "docs", FAILING)
    fail_times(harness, 2)
    observe_now(harness, quiet(), "docs")
    fail_times(harness, 2)
    observe_now(harness, quiet(), "docs")
    assert titles(harness) == []
