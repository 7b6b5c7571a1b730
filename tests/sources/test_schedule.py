"""The schedule source: one trigger observation per call, and through a real tick."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.clock import ManualClock
from agentmonitors.runtime.tick import Runtime
from agentmonitors.sources.base import validate_scope
from agentmonitors.sources.observation import ObservationContext, ObservationResult
from agentmonitors.sources.registry import bundled_registry
from agentmonitors.sources.schedule import ScheduleSource
from agentmonitors.store.database import Database


def ms(text: str) -> int:
    return int(datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp() * 1000)


def observe(config: dict[str, Any], now_ms: int = 1_780_000_000_123) -> ObservationResult:
    context = ObservationContext(previous_state=None, now_ms=now_ms, workspace_path=None)
    return asyncio.run(ScheduleSource().observe(config, context))


def test_every_call_emits_one_trigger_stamped_with_the_runtime_clock() -> None:
    result = observe({"cron": "0 9 * * 1-5", "interval": "30s"}, ms("2026-05-28T09:00:12.345"))
    (observation,) = result.observations
    assert not result.has_next_state and result.outcome is None and result.warnings == []
    assert observation.to_json() == {
        "title": "Scheduled trigger: 0 9 * * 1-5",
        "summary": "Scheduled trigger: 0 9 * * 1-5",
        "payload": {"cron": "0 9 * * 1-5", "timezone": "UTC"},
        "snapshot": {
            "cron": "0 9 * * 1-5",
            "timezone": "UTC",
            "triggeredAt": "2026-05-28T09:00:12.345Z",
        },
        "objectKey": "0 9 * * 1-5",
        "queryScope": {"cron": "0 9 * * 1-5", "timezone": "UTC"},
    }


def test_label_and_timezone() -> None:
    (observation,) = observe(
        {"cron": "30 8 * * *", "timezone": "Europe/Paris", "label": "Morning digest"}
    ).observations
    assert observation.title == observation.summary == "Morning digest"
    assert observation.payload == {"cron": "30 8 * * *", "timezone": "Europe/Paris"}
    assert observation.query_scope == {"cron": "30 8 * * *", "timezone": "Europe/Paris"}
    assert observation.snapshot_text is None


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({}, "watch.cron: is required"),
        ({"cron": 5}, "watch.cron: expected a cron expression"),
        ({"cron": "0 9 * *"}, "five-field cron"),
        ({"cron": "* * * * *", "timezone": "Mars/Base"}, '"Mars/Base" is not a valid IANA'),
    ],
)
def test_invalid_config_raises_so_only_that_monitor_errors(
    config: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match="Invalid schedule config") as caught:
        observe(config)
    assert message in str(caught.value)
    assert validate_scope(ScheduleSource(), config)


def test_interval_is_reported_as_ignored() -> None:
    source = ScheduleSource()
    assert source.config_warnings({"cron": "* * * * *"}) == []
    (warning,) = source.config_warnings({"cron": "* * * * *", "interval": "5m"})
    assert "ignored" in warning


# --------------------------------------------------------------------------- real tick


class TickHarness:
    def __init__(self, workspace: Path, db_path: Path, start_ms: int) -> None:
        self.workspace = workspace
        self.clock = ManualClock(start_ms)
        self.db = Database(str(db_path))
        self.runtime = Runtime(self.db, str(workspace), bundled_registry(), clock=self.clock)

    def tick(self) -> Any:
        return asyncio.run(self.runtime.tick())

    def restart(self) -> None:
        """A new process over the same database (the daemon stopped and started again)."""
        self.runtime = Runtime(self.db, str(self.workspace), bundled_registry(), clock=self.clock)

    def events(self) -> list[dict[str, Any]]:
        with self.db.read() as conn:
            return [dict(row) for row in conn.execute("SELECT * FROM monitor_events")]


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[TickHarness]:
    workspace = tmp_path / "ws"
    folder = workspace / ".claude" / "monitors" / "standup"
    folder.mkdir(parents=True)
    (folder / "MONITOR.md").write_text(
        "---\nwatch:\n  type: schedule\n  cron: '0 9 * * 1-5'\n"
        "  timezone: America/New_York\n---\nPost the standup notes.\n"
    )
    # Thursday 2026-05-28, 08:59:30 in New York (EDT, UTC-4).
    h = TickHarness(workspace, tmp_path / "data" / "inbox.db", ms("2026-05-28T12:59:30"))
    yield h
    h.db.close()


def test_schedule_monitor_through_the_runtime_tick(harness: TickHarness) -> None:
    early = harness.tick()
    assert early.evaluated_monitors == [] and early.errored_observations == []
    assert early.skipped_monitors == [
        {"monitorId": "standup", "nextDueAt": "2026-05-28T13:00:00.000Z"}
    ]

    harness.clock.set(ms("2026-05-28T13:00:05"))
    fired = harness.tick()
    assert fired.evaluated_monitors == ["standup"]
    (event_id,) = fired.emitted_event_ids
    (event,) = harness.events()
    assert event["id"] == event_id
    assert event["title"] == "Scheduled trigger: 0 9 * * 1-5"
    assert event["object_key"] == "0 9 * * 1-5"
    assert json.loads(event["query_scope"]) == {
        "cron": "0 9 * * 1-5",
        "timezone": "America/New_York",
    }

    # Same minute again: not twice.
    harness.clock.advance(30_000)
    again = harness.tick()
    assert again.evaluated_monitors == [] and again.emitted_event_ids == []
    assert again.skipped_monitors[0]["nextDueAt"] == "2026-05-29T13:00:00.000Z"

    # The daemon sleeps through Friday (the laptop's lid shut until Monday): one
    # catch-up run when it wakes, not one per missed morning.
    harness.clock.set(ms("2026-06-01T15:00:00"))  # Monday 11:00 in New York
    late = harness.tick()
    assert late.evaluated_monitors == ["standup"] and len(late.emitted_event_ids) == 1
    harness.clock.advance(60_000)
    after = harness.tick()
    assert after.evaluated_monitors == [] and after.emitted_event_ids == []
    assert after.skipped_monitors[0]["nextDueAt"] == "2026-06-02T13:00:00.000Z"

    # No daemon runs from Monday until Wednesday 11:00: Tuesday's is not replayed.
    harness.restart()
    harness.clock.set(ms("2026-06-03T15:00:00"))
    down = harness.tick()
    assert down.evaluated_monitors == [] and down.emitted_event_ids == []
    assert down.skipped_monitors[0]["nextDueAt"] == "2026-06-04T13:00:00.000Z"
    harness.clock.set(ms("2026-06-04T13:00:40"))
    assert len(harness.tick().emitted_event_ids) == 1
    assert len(harness.events()) == 3
