"""``Runtime.tick_blocking`` (what ``daemon once`` runs) stores what ``tick`` stores.

Each scenario runs twice against real SQLite files, once through the event loop and
once without, and the results, rows and backoff are compared.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.clock import ManualClock
from agentmonitors.daemon.compose import workspace_runtime
from agentmonitors.runtime.tick import TickResult
from agentmonitors.sources.base import SourceRegistry
from agentmonitors.sources.observation import Observation, ObservationContext, ObservationResult
from agentmonitors.store.database import Database
from tests.runtime.test_tick import START, ScriptedSource, observed, write_monitor


class BlockingSource(ScriptedSource):
    """The scripted source, able to observe in place as file-fingerprint can."""

    name = "blocking"

    def __init__(self) -> None:
        super().__init__()
        self.blocking_calls = 0

    def observe_blocking(
        self, config: Mapping[str, Any], context: ObservationContext
    ) -> ObservationResult:
        self.blocking_calls += 1
        self.contexts.append(context)
        if not self.queue:
            return ObservationResult()
        item = self.queue.pop(0)
        if isinstance(item, Exception):
            raise item
        return item


class Twin:
    """One workspace and store, ticked either way."""

    def __init__(self, root: Path, blocking: bool) -> None:
        self.root = root
        (root / ".claude" / "monitors").mkdir(parents=True)
        self.blocking = blocking
        self.clock = ManualClock(START)
        self.scripted = ScriptedSource()
        self.in_place = BlockingSource()
        registry = SourceRegistry()
        registry.register(self.scripted)
        registry.register(self.in_place)
        self.db = Database(str(root / "inbox.db"))
        self.runtime = workspace_runtime(self.db, str(root), registry, clock=self.clock)

    def tick(self) -> TickResult:
        if self.blocking:
            return self.runtime.tick_blocking()
        return asyncio.run(self.runtime.tick())

    def rows(self, sql: str) -> list[dict[str, Any]]:
        with self.db.read() as conn:
            return [dict(row) for row in conn.execute(sql)]

    def stored(self) -> dict[str, Any]:
        """Everything a tick leaves behind, without ids."""
        return {
            "state": self.rows(
                "SELECT monitor_id, last_observation_at, source_state, notify_state"
                " FROM monitor_state ORDER BY monitor_id"
            ),
            "history": self.rows(
                "SELECT monitor_id, result, observation_data FROM observation_history"
                " ORDER BY rowid"
            ),
            "events": self.rows(
                "SELECT monitor_id, title, object_key, diff_text FROM monitor_events ORDER BY id"
            ),
        }


def summary(result: TickResult) -> dict[str, Any]:
    shape = result.to_json()
    shape["emittedEventIds"] = len(shape["emittedEventIds"])
    return {**shape, "wake": result.next_wake_ms}


Scenario = Callable[[Twin], list[dict[str, Any]]]


def changes_and_errors(twin: Twin) -> list[dict[str, Any]]:
    write_monitor(twin.root, "docs", "watch:\n  type: blocking\n  interval: 1s\n")
    write_monitor(twin.root, "ops", "watch:\n  type: blocking\n  interval: 1s\n")
    twin.in_place.queue += [
        observed(Observation(title="t1", snapshot_text="a\nb", object_key="k"), state={"n": 1}),
        observed(state={"baseline": True}),
    ]
    results = [summary(twin.tick())]
    twin.clock.advance(1_000)
    twin.in_place.queue += [
        observed(Observation(title="t2", snapshot_text="a\nc", object_key="k"), state={"n": 2}),
        RuntimeError("disk on fire"),
    ]
    results.append(summary(twin.tick()))
    twin.clock.advance(1_000)  # "ops" backs off; "docs" returns something that is no result
    twin.in_place.queue.append("not a result")  # type: ignore[arg-type]
    results.append(summary(twin.tick()))
    results.append({"backoff": twin.runtime.failure_of("ops")})
    return results


def mixed_sources(twin: Twin) -> list[dict[str, Any]]:
    """One due monitor's source can only be awaited: every one goes through asyncio."""
    write_monitor(twin.root, "a", "watch:\n  type: blocking\n")
    write_monitor(twin.root, "b", "watch:\n  type: scripted\n")
    twin.in_place.queue.append(observed(Observation(title="from a")))
    twin.scripted.queue.append(observed(Observation(title="from b")))
    return [summary(twin.tick())]


@pytest.mark.parametrize("scenario", [changes_and_errors, mixed_sources])
def test_both_ways_store_the_same(scenario: Scenario, tmp_path: Path) -> None:
    awaited, in_place = Twin(tmp_path / "awaited", False), Twin(tmp_path / "in-place", True)
    try:
        assert scenario(in_place) == scenario(awaited)
        assert in_place.stored() == awaited.stored()
        assert awaited.in_place.blocking_calls == 0
    finally:
        awaited.db.close()
        in_place.db.close()


def test_sources_that_can_observe_in_place_are_not_awaited(tmp_path: Path) -> None:
    twin = Twin(tmp_path / "ws", True)
    try:
        results = changes_and_errors(twin)
        assert twin.in_place.blocking_calls == 5
        assert results[1]["erroredObservations"] == [
            {"monitorId": "ops", "message": "disk on fire"}
        ]
        assert results[2]["erroredObservations"] == [
            {"monitorId": "docs", "message": 'source "blocking" returned str'}
        ]
        events = twin.stored()["events"]
        assert [(event["title"], event["diff_text"]) for event in events] == [
            ("t1", None),
            ("t2", "- 2: b\n+ 2: c"),
        ]
        assert json.loads(twin.stored()["state"][0]["source_state"]) == {"n": 2}
    finally:
        twin.db.close()


def test_mixed_sources_still_run_in_scan_order(tmp_path: Path) -> None:
    twin = Twin(tmp_path / "ws", True)
    try:
        assert mixed_sources(twin)[0]["evaluatedMonitors"] == ["a", "b"]
        assert twin.in_place.blocking_calls == 0  # awaited, as the tick would
        assert [event["title"] for event in twin.stored()["events"]] == ["from a", "from b"]
    finally:
        twin.db.close()
