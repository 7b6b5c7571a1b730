"""Every failure backs off, and never retries sooner than the monitor's own cadence.

Driven by the manual clock: nothing here sleeps.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from agentmonitors.clock import iso_from_ms
from agentmonitors.runtime.backoff import restored_failures
from agentmonitors.runtime.scheduling import retry_delay_ms
from agentmonitors.sources.observation import ObservationResult
from tests.runtime.test_tick import START, Harness, write_monitor


@pytest.fixture
def harness(tmp_path: Path) -> Harness:
    root = tmp_path / "ws"
    (root / ".claude" / "monitors").mkdir(parents=True)
    return Harness(root, tmp_path / "monitors.db")


def retry_gaps(harness: Harness, failures: int) -> list[int]:
    """Seconds between the tries of a monitor whose source keeps raising."""
    tries: list[int] = []
    while len(tries) < failures:
        harness.source.queue.append(RuntimeError("upstream is down"))
        result = harness.tick()
        if result.evaluated_monitors:
            tries.append(harness.clock.now_ms())
        assert result.next_wake_ms is not None
        harness.clock.set(result.next_wake_ms)
        harness.source.queue.clear()
    return [(later - earlier) // 1000 for earlier, later in itertools.pairwise(tries)]


def test_a_failing_five_minute_poll_is_never_retried_sooner_than_five_minutes(
    harness: Harness,
) -> None:
    write_monitor(harness.workspace, "api", "watch:\n  type: scripted\n  interval: 5m\n")
    assert retry_gaps(harness, 5) == [300, 300, 300, 300]


def test_a_failing_ten_second_poll_waits_its_interval_then_backs_off(harness: Harness) -> None:
    write_monitor(harness.workspace, "api", "watch:\n  type: scripted\n  interval: 10s\n")
    assert retry_gaps(harness, 7) == [10, 10, 20, 40, 80, 160]


def test_a_failure_the_source_reports_backs_off_like_a_raised_one(harness: Harness) -> None:
    """A run that fails without raising (a command's non-zero exit) is still a failure:
    recorded as errored with its reason, and retried no sooner than the backoff."""
    write_monitor(harness.workspace, "cmd", "watch:\n  type: scripted\n  interval: 10s\n")
    tries: list[int] = []
    while len(tries) < 5:
        harness.source.queue.append(
            ObservationResult(next_state={"health": "failing"}, failure="exit status 128")
        )
        result = harness.tick()
        if result.evaluated_monitors:
            tries.append(harness.clock.now_ms())
            assert result.errored_observations == [
                {"monitorId": "cmd", "message": "exit status 128"}
            ]
        assert result.next_wake_ms is not None
        harness.clock.set(result.next_wake_ms)
        harness.source.queue.clear()
    gaps = [(later - earlier) // 1000 for earlier, later in itertools.pairwise(tries)]
    assert gaps == [10, 10, 20, 40]
    rows = harness.rows("SELECT result, observation_data FROM observation_history ORDER BY id")
    assert {row["result"] for row in rows} == {"errored"}
    assert json.loads(rows[-1]["observation_data"]) == {
        "observed": 0,
        "emitted": 0,
        "error": "exit status 128",
    }
    # Its state is stored all the same (a failing command keeps its last good result).
    (state,) = harness.rows("SELECT source_state FROM monitor_state WHERE monitor_id = 'cmd'")
    assert json.loads(state["source_state"]) == {"health": "failing"}

    # One success ends the failing streak: the next failure starts the backoff over.
    harness.source.queue.append(ObservationResult(next_state={"health": "ok"}))
    harness.clock.set(tries[-1] + 80_000)
    assert harness.tick().evaluated_monitors == ["cmd"]
    assert harness.runtime.failure_of("cmd") == (0, 0, None)


def test_a_restored_backoff_also_waits_the_interval(harness: Harness) -> None:
    """``daemon once`` reads the backoff back from the history, with the same floor."""
    write_monitor(harness.workspace, "api", "watch:\n  type: scripted\n  interval: 5m\n")
    harness.source.queue.append(RuntimeError("down"))
    harness.tick()
    found = restored_failures(harness.db, "api", str(harness.workspace), None, 300_000)
    assert found == (1, START + 300_000, "down")
    skipped = harness.tick().skipped_monitors
    assert {"monitorId": "api", "nextDueAt": iso_from_ms(START + 300_000)} in skipped


def test_a_restored_count_is_the_whole_run_of_failures(harness: Harness) -> None:
    """The count is shown (``Backing off after N consecutive failures``): a run longer
    than the wait needs is still counted whole."""
    write_monitor(harness.workspace, "api", "watch:\n  type: scripted\n  interval: 1s\n")
    assert retry_gaps(harness, 12)
    found = restored_failures(harness.db, "api", str(harness.workspace), None, 1_000)
    assert found is not None
    assert found[0] == 12 == harness.runtime.failure_of("api")[0]


def test_retry_delay_is_the_larger_of_the_backoff_and_the_cadence() -> None:
    assert [retry_delay_ms(n, 0) for n in range(1, 8)] == [
        5_000,
        10_000,
        20_000,
        40_000,
        80_000,
        160_000,
        300_000,
    ]
    assert retry_delay_ms(1, 300_000) == 300_000
    assert retry_delay_ms(3, 10_000) == 20_000
    assert retry_delay_ms(20, 3_600_000) == 3_600_000
