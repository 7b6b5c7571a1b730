"""The tick against a real SQLite file, driven by a manual clock and a scripted source."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.clock import ManualClock, iso_from_ms
from agentmonitors.daemon.compose import workspace_runtime
from agentmonitors.runtime.tick import TickResult
from agentmonitors.sources.base import SourceRegistry
from agentmonitors.sources.observation import Observation, ObservationContext, ObservationResult
from agentmonitors.store.database import Database

START = 1_780_000_000_000


class ScriptedSource:
    """A real source whose observations come from a list the test fills."""

    name = "scripted"
    description = "Test source"
    stateful = False
    scope_schema: Mapping[str, Any] = {"type": "object"}

    def __init__(self) -> None:
        self.queue: list[ObservationResult | Exception] = []
        self.contexts: list[ObservationContext] = []

    async def observe(
        self, config: Mapping[str, Any], context: ObservationContext
    ) -> ObservationResult:
        self.contexts.append(context)
        if not self.queue:
            return ObservationResult()
        item = self.queue.pop(0)
        if isinstance(item, Exception):
            raise item
        return item


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".claude" / "monitors").mkdir(parents=True)
    return root


def write_monitor(workspace: Path, monitor_id: str, frontmatter: str, body: str = "Act.") -> None:
    folder = workspace / ".claude" / "monitors" / monitor_id
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "MONITOR.md").write_text(f"---\n{frontmatter}---\n{body}\n")


class Harness:
    def __init__(self, workspace: Path, db_path: Path) -> None:
        self.workspace = workspace
        self.db_path = db_path
        self.clock = ManualClock(START)
        self.source = ScriptedSource()
        self.registry = SourceRegistry()
        self.registry.register(self.source)
        self.restart()

    def restart(self) -> None:
        self.db = Database(str(self.db_path))
        self.runtime = workspace_runtime(
            self.db, str(self.workspace), self.registry, clock=self.clock
        )

    def tick(self, *force: str) -> TickResult:
        return asyncio.run(self.runtime.tick(force))

    def rows(self, sql: str, *params: Any) -> list[dict[str, Any]]:
        with self.db.read() as conn:
            return [dict(row) for row in conn.execute(sql, params)]


@pytest.fixture
def harness(workspace: Path, tmp_path: Path) -> Harness:
    h = Harness(workspace, tmp_path / "data" / "inbox.db")
    yield h
    h.db.close()


def observed(*observations: Observation, state: Any = None) -> ObservationResult:
    return ObservationResult(list(observations), next_state=state)


def test_events_carry_the_materialization_rules(harness: Harness) -> None:
    write_monitor(harness.workspace, "docs", "watch:\n  type: scripted\ntags: [docs]\n", "Review.")
    harness.source.queue.append(
        observed(
            Observation(
                title="File changed: a.md",
                snapshot_text="one\n",
                object_key="/w/a.md",
                query_scope={"filePath": "/w/a.md"},
                change_kind="modified",
            ),
            state={"cursor": 1},
        )
    )
    result = harness.tick()
    assert result.evaluated_monitors == ["docs"]
    (event_id,) = result.emitted_event_ids
    (event,) = harness.rows("SELECT * FROM monitor_events")
    assert event["id"] == event_id
    assert event["title"] == "File changed: a.md"
    assert event["summary"] == "File changed: a.md"
    assert event["body"] == "Review."
    assert event["urgency"] == "normal"
    assert event["object_key"] == "/w/a.md"
    assert event["baseline_strategy"] == "net"
    assert json.loads(event["query_scope"]) == {"filePath": "/w/a.md", "changeKind": "modified"}
    assert json.loads(event["tags"]) == ["docs"]
    assert event["created_at"] == START // 1000
    assert event["diff_text"] is None
    assert event["workspace_path"] == str(harness.workspace)
    (state,) = harness.rows("SELECT * FROM monitor_state")
    assert json.loads(state["source_state"]) == {"cursor": 1}
    assert state["last_observation_at"] == START // 1000
    (history,) = harness.rows("SELECT * FROM observation_history")
    assert history["result"] == "triggered"
    assert json.loads(history["observation_data"]) == {"observed": 1, "emitted": 1}


def test_name_overrides_title_and_second_snapshot_gets_a_diff(harness: Harness) -> None:
    write_monitor(harness.workspace, "docs", "name: Docs drift\nwatch:\n  type: scripted\n")
    harness.source.queue += [
        observed(Observation(title="t1", snapshot_text="a\nb", object_key="k")),
        observed(Observation(title="t2", snapshot_text="a\nc", object_key="k")),
    ]
    harness.tick()
    harness.clock.advance(30_000)
    harness.tick()
    events = harness.rows("SELECT title, diff_text FROM monitor_events ORDER BY id")
    assert events == [
        {"title": "Docs drift", "diff_text": None},
        {"title": "Docs drift", "diff_text": "- 2: b\n+ 2: c"},
    ]
    assert len(harness.rows("SELECT * FROM monitor_snapshots")) == 2


def test_not_due_monitor_is_skipped_with_its_next_due_time(harness: Harness) -> None:
    write_monitor(harness.workspace, "docs", "watch:\n  type: scripted\n  interval: 45s\n")
    harness.tick()
    harness.clock.advance(10_000)
    result = harness.tick()
    assert result.evaluated_monitors == []
    assert result.skipped_monitors == [
        {"monitorId": "docs", "nextDueAt": iso_from_ms(START + 45_000)}
    ]
    harness.clock.advance(35_000)
    assert harness.tick().evaluated_monitors == ["docs"]
    results = [row["result"] for row in harness.rows("SELECT result FROM observation_history")]
    assert results == ["no-change", "no-change"]


def test_erroring_monitor_is_recorded_backed_off_and_keeps_its_state(harness: Harness) -> None:
    write_monitor(harness.workspace, "bad", "watch:\n  type: scripted\n  interval: 1s\n")
    write_monitor(harness.workspace, "good", "watch:\n  type: scripted\n  interval: 1s\n")
    harness.source.queue += [
        observed(state={"baseline": True}),  # bad, first tick
        observed(Observation(title="g")),  # good, first tick
    ]
    harness.tick()
    harness.clock.advance(1_000)
    harness.source.queue += [RuntimeError("disk on fire"), observed(Observation(title="g2"))]
    result = harness.tick()
    assert result.errored_observations == [{"monitorId": "bad", "message": "disk on fire"}]
    assert len(result.emitted_event_ids) == 1  # the other monitor still ran
    (bad_state,) = harness.rows("SELECT * FROM monitor_state WHERE monitor_id = 'bad'")
    assert json.loads(bad_state["source_state"]) == {"baseline": True}
    assert bad_state["last_observation_at"] == START // 1000

    harness.clock.advance(1_000)  # inside the 5 s backoff
    result = harness.tick()
    assert "bad" not in result.evaluated_monitors
    assert {"monitorId": "bad", "nextDueAt": iso_from_ms(START + 6_000)} in result.skipped_monitors
    # A hint (forced evaluation) bypasses the backoff: it may be the fix.
    result = harness.tick("bad")
    assert "bad" in result.evaluated_monitors
    errored = harness.rows(
        "SELECT observation_data FROM observation_history WHERE result = 'errored'"
    )
    assert [json.loads(row["observation_data"]) for row in errored] == [{"error": "disk on fire"}]


def test_invalid_definition_is_reported_and_the_rest_run(harness: Harness) -> None:
    write_monitor(harness.workspace, "good", "watch:\n  type: scripted\n")
    write_monitor(harness.workspace, "broken", "watch: [unclosed\n")
    write_monitor(harness.workspace, "unknown", "watch:\n  type: nope\n")
    harness.source.queue.append(observed(Observation(title="g")))
    result = harness.tick()
    assert result.evaluated_monitors == ["good"]
    assert len(result.emitted_event_ids) == 1
    errored = {item["monitorId"]: item["message"] for item in result.errored_observations}
    assert set(errored) == {"broken", "unknown"}
    assert "nope" in errored["unknown"]
    harness.clock.advance(60_000)
    again = harness.tick()
    assert {item["monitorId"] for item in again.errored_observations} == {"broken", "unknown"}
    # History records each problem once, not once per tick.
    assert len(harness.rows("SELECT * FROM observation_history WHERE result = 'errored'")) == 2


def test_monitor_edited_into_invalid_yaml_stops_running(harness: Harness) -> None:
    write_monitor(harness.workspace, "docs", "watch:\n  type: scripted\n  interval: 1s\n")
    assert harness.tick().evaluated_monitors == ["docs"]
    path = harness.workspace / ".claude" / "monitors" / "docs" / "MONITOR.md"
    path.write_text("---\nwatch: {type: scripted\n---\nbody\n")
    harness.clock.advance(2_000)
    result = harness.tick()
    assert result.evaluated_monitors == []
    assert [item["monitorId"] for item in result.errored_observations] == ["docs"]


def test_held_debounce_batch_survives_a_restart(harness: Harness) -> None:
    write_monitor(
        harness.workspace,
        "docs",
        "watch:\n  type: scripted\n  interval: 1s\nnotify:\n  strategy: debounce\n"
        "  settle-for: 10s\n",
    )
    harness.source.queue.append(observed(Observation(title="a"), Observation(title="b")))
    result = harness.tick()
    assert result.emitted_event_ids == []
    assert harness.rows("SELECT result FROM observation_history") == [{"result": "suppressed"}]

    harness.db.close()
    harness.restart()
    harness.clock.advance(10_000)
    result = harness.tick()
    assert len(result.emitted_event_ids) == 2
    titles = [row["title"] for row in harness.rows("SELECT title FROM monitor_events ORDER BY id")]
    assert titles == ["a", "b"]
    created = {row["created_at"] for row in harness.rows("SELECT created_at FROM monitor_events")}
    assert created == {START // 1000}  # observed time, not release time


def test_a_high_observation_is_released_when_it_settles_not_at_the_next_poll(
    harness: Harness,
) -> None:
    write_monitor(
        harness.workspace, "status", "watch:\n  type: scripted\n  interval: 5m\nurgency: high\n"
    )
    harness.source.queue.append(observed(Observation(title="Deploy failed")))
    first = harness.tick()
    assert first.emitted_event_ids == []
    # The daemon is told to come back when the 15 s settle ends, not in 5 minutes.
    assert first.next_wake_ms == START + 15_000

    harness.clock.advance(14_999)
    assert harness.tick().emitted_event_ids == []
    harness.clock.advance(1)
    released = harness.tick()
    assert released.evaluated_monitors == []  # the source itself is not due
    assert len(released.emitted_event_ids) == 1
    assert released.next_wake_ms == START + 300_000
    rows = harness.rows("SELECT result, observation_data FROM observation_history ORDER BY id")
    assert rows[-1] == {"result": "triggered", "observation_data": '{"observed":0,"emitted":1}'}


def test_the_next_wake_is_the_soonest_due_monitor_or_retry(harness: Harness) -> None:
    write_monitor(harness.workspace, "fast", "watch:\n  type: scripted\n  interval: 2s\n")
    write_monitor(harness.workspace, "slow", "watch:\n  type: scripted\n  interval: 1h\n")
    assert harness.tick().next_wake_ms == START + 2_000
    harness.source.queue.append(RuntimeError("down"))  # fast fails: retried after 5 s
    harness.clock.advance(2_000)
    result = harness.tick()
    assert [item["monitorId"] for item in result.errored_observations] == ["fast"]
    harness.clock.advance(2_000)
    backing_off = harness.tick()
    assert backing_off.evaluated_monitors == []
    assert backing_off.next_wake_ms == START + 2_000 + 5_000


def test_rollup_flushes_on_a_not_due_tick(harness: Harness) -> None:
    # 2026-05-28T20:26:40Z is START; the window fires at 20:30 UTC.
    write_monitor(
        harness.workspace,
        "digest",
        "watch:\n  type: scripted\n  interval: 1h\nnotify:\n  strategy: rollup\n"
        "  window: '30 20 * * *'\n",
    )
    harness.source.queue.append(observed(Observation(title="a")))
    held = harness.tick()
    assert held.emitted_event_ids == []
    assert held.next_wake_ms == START + 200_000  # the window, not the hourly poll
    harness.clock.set(START + 200_000)  # 20:30:00, monitor not due for an hour
    result = harness.tick()
    assert result.evaluated_monitors == []
    assert len(result.emitted_event_ids) == 1
    rows = harness.rows("SELECT result, observation_data FROM observation_history ORDER BY id")
    assert rows[-1] == {"result": "triggered", "observation_data": '{"observed":0,"emitted":1}'}


def test_one_event_failing_to_store_does_not_lose_its_siblings(harness: Harness) -> None:
    write_monitor(harness.workspace, "docs", "watch:\n  type: scripted\n")
    harness.source.queue.append(
        observed(Observation(title="ok"), Observation(title="bad", payload={1, 2}))
    )
    result = harness.tick()
    assert len(result.emitted_event_ids) == 1
    assert result.errored_observations == []
    assert [row["title"] for row in harness.rows("SELECT title FROM monitor_events")] == ["ok"]
    results = [row["result"] for row in harness.rows("SELECT result FROM observation_history")]
    assert sorted(results) == ["errored", "triggered"]


def test_lead_sessions_receive_projections_with_cursor_seeded(harness: Harness) -> None:
    write_monitor(harness.workspace, "docs", "watch:\n  type: scripted\n  interval: 1s\n")
    with harness.db.write() as conn:
        for sid, role, workspace in (
            ("S1", "lead", str(harness.workspace)),
            ("S2", "subagent", str(harness.workspace)),
            ("S3", "lead", "/elsewhere"),
            ("S4", "lead", None),
        ):
            conn.execute(
                "INSERT INTO agent_sessions (id, adapter, host_session_id, agent_identity, role,"
                " workspace_path, hook_state_path, status, baseline_at, last_active_at,"
                " created_at, updated_at) VALUES (?, 'claude-code', ?, ?, ?, ?, '/x', 'active',"
                " ?, ?, ?, ?)",
                (sid, sid, sid, role, workspace, *([START // 1000] * 4)),
            )
    harness.source.queue += [
        ObservationResult(
            baselines=[Observation(title="base", snapshot_text="v0", object_key="k")]
        ),
        observed(Observation(title="v1", snapshot_text="v1", object_key="k")),
        observed(Observation(title="v2", snapshot_text="v2", object_key="k")),
    ]
    for _ in range(3):
        harness.tick()
        harness.clock.advance(1_000)
    projected = harness.rows(
        "SELECT s.session_id, s.diff_text, e.title FROM session_event_state s"
        " JOIN monitor_events e ON e.id = s.event_id ORDER BY e.id, s.session_id"
    )
    # The baseline's text is the first snapshot: the first change is a diff.
    assert projected == [
        {"session_id": "S1", "diff_text": "- 1: v0\n+ 1: v1", "title": "v1"},
        {"session_id": "S4", "diff_text": "- 1: v0\n+ 1: v1", "title": "v1"},
        {"session_id": "S1", "diff_text": "- 1: v0\n+ 1: v2", "title": "v2"},
        {"session_id": "S4", "diff_text": "- 1: v0\n+ 1: v2", "title": "v2"},
    ]
    # Each recipient's cursor is what existed before its first event, not that event.
    cursors = harness.rows("SELECT session_id, baseline_content FROM session_object_cursor")
    assert sorted((row["session_id"], row["baseline_content"]) for row in cursors) == [
        ("S1", "v0"),
        ("S4", "v0"),
    ]


def insert_session(harness: Harness, sid: str, last_active_s: int, workspace: str | None) -> None:
    with harness.db.write() as conn:
        conn.execute(
            "INSERT INTO agent_sessions (id, adapter, host_session_id, agent_identity, role,"
            " workspace_path, hook_state_path, status, baseline_at, last_active_at,"
            " created_at, updated_at) VALUES (?, 'claude-code', ?, ?, 'lead', ?, '/x',"
            " 'active', ?, ?, ?, ?)",
            (sid, sid, sid, workspace, *([last_active_s] * 4)),
        )


def test_sessions_idle_for_thirty_minutes_go_dormant(harness: Harness) -> None:
    now_s = START // 1000
    insert_session(harness, "OLD", now_s - 1_800, str(harness.workspace))
    insert_session(harness, "FRESH", now_s - 1_799, str(harness.workspace))
    insert_session(harness, "GLOBAL", now_s - 4_000, None)
    insert_session(harness, "OTHER", now_s - 4_000, "/another/project")
    with harness.db.write() as conn:
        conn.execute(
            "INSERT INTO ephemeral_monitors (id, session_id, source_name, urgency, urgency_max,"
            " created_at, updated_at) VALUES ('ephemeral:OLD/1', 'OLD', 'scripted', 'normal',"
            " 'normal', ?, ?)",
            (now_s - 5_000, now_s - 5_000),
        )
    harness.tick()
    statuses = {
        row["id"]: (row["status"], row["dormant_at"])
        for row in harness.rows("SELECT id, status, dormant_at FROM agent_sessions")
    }
    assert statuses == {
        "OLD": ("dormant", now_s),
        "FRESH": ("active", None),
        "GLOBAL": ("dormant", now_s),
        "OTHER": ("active", None),
    }
    assert harness.rows("SELECT status FROM ephemeral_monitors") == [{"status": "reaped"}]


def test_object_tombstones_remove_the_objects_events_then_expire(harness: Harness) -> None:
    write_monitor(harness.workspace, "docs", "watch:\n  type: scripted\n  interval: 1s\n")
    insert_session(harness, "S1", START // 1000, str(harness.workspace))
    harness.source.queue.append(
        ObservationResult(
            baselines=[
                Observation(title="scratch", snapshot_text="x0", object_key="/w/scratch"),
                Observation(title="kept", snapshot_text="y0", object_key="/w/kept"),
            ]
        )
    )
    harness.source.queue.append(
        observed(
            Observation(title="scratch", snapshot_text="x", object_key="/w/scratch"),
            Observation(title="kept", snapshot_text="y", object_key="/w/kept"),
        )
    )
    harness.tick()
    harness.clock.advance(1_000)
    harness.tick()
    assert len(harness.rows("SELECT * FROM session_event_state")) == 2
    with harness.db.write() as conn:
        conn.execute(
            "INSERT INTO object_event_suppressions (id, monitor_id, object_key, workspace_path,"
            " created_at, expires_at) VALUES ('t', 'docs', '/w/scratch', ?, ?, ?)",
            (str(harness.workspace), START // 1000, START // 1000 + 60),
        )
    harness.clock.advance(1_000)
    harness.tick()
    assert [row["title"] for row in harness.rows("SELECT title FROM monitor_events")] == ["kept"]
    assert len(harness.rows("SELECT * FROM session_event_state")) == 1
    assert [
        row["object_key"] for row in harness.rows("SELECT object_key FROM monitor_snapshots")
    ] == ["/w/kept", "/w/kept"]  # its baseline and its event's
    assert [
        r["object_key"] for r in harness.rows("SELECT object_key FROM session_object_cursor")
    ] == ["/w/kept"]
    harness.clock.advance(60_000)
    harness.tick()
    assert harness.rows("SELECT * FROM object_event_suppressions") == []
