"""``monitor explain`` against real MONITOR.md files, a real SQLite file and real ticks."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.clock import ManualClock, iso_from_ms
from agentmonitors.daemon.compose import workspace_runtime
from agentmonitors.diagnosis.explain import (
    explain_monitor,
    has_persisted_state,
    render_explain_text,
)
from agentmonitors.runtime.tick import TickResult
from agentmonitors.sources.observation import ObservationContext, ObservationResult
from agentmonitors.sources.registry import bundled_registry
from agentmonitors.store import queries
from agentmonitors.store.database import Database

START = 1_780_000_000_000
STAGES = ["definition", "scheduling", "observation", "notify", "materialization", "delivery"]
FINGERPRINT = 'watch:\n  type: file-fingerprint\n  globs: "*.txt"\n'


class FailingSource:
    """A real registered source whose observe raises, to drive errors and backoff."""

    name = "failing"
    description = "Always fails"
    stateful = False
    scope_schema: Mapping[str, Any] = {"type": "object"}

    async def observe(
        self, config: Mapping[str, Any], context: ObservationContext
    ) -> ObservationResult:
        raise RuntimeError("upstream is down")


def write_monitor(workspace: Path, monitor_id: str, frontmatter: str, where: str = "") -> Path:
    folder = workspace / ".claude" / "monitors" / where / monitor_id
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "MONITOR.md"
    path.write_text(f"---\n{frontmatter}---\nBody\n")
    return path


class Harness:
    def __init__(self, tmp_path: Path) -> None:
        self.workspace = tmp_path / "ws"
        (self.workspace / ".claude" / "monitors").mkdir(parents=True)
        self.clock = ManualClock(START)
        self.registry = bundled_registry()
        self.registry.register(FailingSource())
        self.db = Database(str(tmp_path / "state" / "agentmonitors.db"))
        self.runtime = workspace_runtime(
            self.db, str(self.workspace), self.registry, clock=self.clock
        )

    def tick(self) -> TickResult:
        return asyncio.run(self.runtime.tick())

    def explain(self, monitor_id: str, *, live: bool = False, **kwargs: Any) -> dict[str, Any]:
        return explain_monitor(
            self.db,
            self.registry,
            monitor_id=monitor_id,
            workspace=str(self.workspace),
            monitors_dir=None,
            now_ms=self.clock.now_ms(),
            runtime=self.runtime if live else None,
            **kwargs,
        )

    def add_session(self, session_id: str, workspace: str | None, created_ms: int) -> None:
        seconds = created_ms // 1000
        with self.db.write() as conn:
            conn.execute(
                "INSERT INTO agent_sessions (id, adapter, host_session_id, agent_identity, role,"
                " workspace_path, hook_state_path, status, baseline_at, last_active_at,"
                " created_at, updated_at) VALUES (?, 'claude-code', ?, 'claude', 'lead', ?,"
                " '/tmp/hook.json', 'active', ?, ?, ?, ?)",
                (session_id, session_id, workspace, seconds, seconds, seconds, seconds),
            )

    def counts(self) -> dict[str, int]:
        tables = ("observation_history", "monitor_events", "monitor_state", "session_event_state")
        return {table: queries.count_rows(self.db, table) for table in tables}


@pytest.fixture
def harness(tmp_path: Path) -> Harness:
    return Harness(tmp_path)


def stage(report: Mapping[str, Any], stage_id: str) -> dict[str, Any]:
    found: dict[str, Any] = next(item for item in report["stages"] if item["id"] == stage_id)
    return found


def statuses(report: Mapping[str, Any]) -> dict[str, str]:
    return {item["id"]: item["status"] for item in report["stages"]}


def fingerprint_monitor(harness: Harness, monitor_id: str = "docs", extra: str = "") -> None:
    write_monitor(harness.workspace, monitor_id, FINGERPRINT + extra)
    (harness.workspace / "notes.txt").write_text("one\n")


def change_file(harness: Harness, text: str) -> None:
    (harness.workspace / "notes.txt").write_text(text)


# --------------------------------------------------------------------------- definition


def test_unknown_id_lists_the_known_ids(harness: Harness) -> None:
    fingerprint_monitor(harness, "docs")
    write_monitor(harness.workspace, "api", FINGERPRINT)
    report = harness.explain("nope")
    assert [item["id"] for item in report["stages"]] == STAGES
    assert [item["label"] for item in report["stages"]] == [
        "Definition",
        "Scheduling",
        "Observation",
        "Notify state",
        "Materialization",
        "Projection and delivery",
    ]
    definition = stage(report, "definition")
    assert definition["status"] == "failure"
    assert "known ids: api, docs" in definition["reason"]
    assert definition["details"]["knownIds"] == ["api", "docs"]
    assert report["monitor"] == {
        "id": "nope",
        "displayName": None,
        "filePath": None,
        "sourceName": None,
        "urgency": None,
    }
    assert report["verdict"] == {
        "status": "failure",
        "stage": "definition",
        "reason": definition["reason"],
    }
    assert all(item["status"] == "pending" for item in report["stages"][1:])
    assert report["generatedAt"] == iso_from_ms(START)
    assert not has_persisted_state(report)
    json.dumps(report)  # the daemon sends it over the socket


def test_unknown_id_in_an_empty_folder(harness: Harness) -> None:
    reason = stage(harness.explain("nope"), "definition")["reason"]
    assert "no monitors are defined" in reason


def test_invalid_definition_reports_the_validation_problem(harness: Harness) -> None:
    path = write_monitor(
        harness.workspace, "docs", "name: Docs\nurgency: high\nwatch:\n  type: file-fingerprint\n"
    )
    report = harness.explain("docs")
    definition = stage(report, "definition")
    assert definition["status"] == "failure"
    assert definition["reason"].startswith("Monitor definition is invalid: ")
    assert "globs" in definition["reason"]
    assert definition["details"]["filePath"] == str(path)
    assert report["monitor"] == {
        "id": "docs",
        "displayName": "Docs",
        "filePath": str(path),
        "sourceName": "file-fingerprint",
        "urgency": "high",
    }
    assert report["verdict"]["stage"] == "definition"


def test_unparseable_definition_reports_the_parse_error(harness: Harness) -> None:
    path = write_monitor(harness.workspace, "docs", "watch: [unclosed\n")
    report = harness.explain("docs")
    definition = stage(report, "definition")
    assert definition["status"] == "failure"
    assert definition["reason"].startswith("MONITOR.md failed to parse: ")
    assert report["monitor"]["filePath"] == str(path)
    assert report["monitor"]["displayName"] is None


def test_unknown_source_is_a_definition_failure(harness: Harness) -> None:
    write_monitor(harness.workspace, "docs", "watch:\n  type: no-such-source\n")
    definition = stage(harness.explain("docs"), "definition")
    assert definition["status"] == "failure"
    assert "no-such-source" in definition["reason"]


def test_duplicate_ids_are_a_definition_failure(harness: Harness) -> None:
    write_monitor(harness.workspace, "docs", FINGERPRINT, where="a")
    write_monitor(harness.workspace, "docs", FINGERPRINT, where="b")
    report = harness.explain("docs")
    definition = stage(report, "definition")
    assert definition["status"] == "failure"
    assert definition["reason"].startswith('Duplicate monitor id "docs"')
    assert report["verdict"]["status"] == "failure"


# ------------------------------------------------------------------- scheduling, observation


def test_never_observed_is_pending_at_observation(harness: Harness) -> None:
    fingerprint_monitor(harness)
    report = harness.explain("docs")
    assert statuses(report) == {
        "definition": "ok",
        "scheduling": "ok",
        "observation": "pending",
        "notify": "ok",
        "materialization": "pending",
        "delivery": "pending",
    }
    scheduling = stage(report, "scheduling")
    assert scheduling["reason"] == "Not observed yet; due now (every 30s)."
    assert scheduling["details"]["nextDueAt"] == iso_from_ms(START)
    assert scheduling["details"]["lastObservationAt"] is None
    assert "Not observed yet" in stage(report, "observation")["reason"]
    assert report["verdict"]["stage"] == "observation"
    assert report["verdict"]["status"] == "pending"
    assert report["monitor"]["displayName"] == "docs"
    assert report["monitor"]["urgency"] == "normal"
    assert not has_persisted_state(report)


def test_idle_monitor_is_healthy_and_scheduled(harness: Harness) -> None:
    fingerprint_monitor(harness, extra="  interval: 1m\n")
    harness.tick()  # baseline
    harness.clock.advance(20_000)
    report = harness.explain("docs")
    assert statuses(report) == {
        "definition": "ok",
        "scheduling": "ok",
        "observation": "healthy",
        "notify": "ok",
        "materialization": "healthy",
        "delivery": "healthy",
    }
    scheduling = stage(report, "scheduling")
    assert scheduling["reason"] == (
        f"Last observed at {iso_from_ms(START)}; next due in 40s, at"
        f" {iso_from_ms(START + 60_000)} (every 1m)."
    )
    assert scheduling["details"]["intervalMs"] == 60_000
    assert report["verdict"]["status"] == "healthy"
    assert report["verdict"]["stage"] == "observation"
    assert [row["result"] for row in report["observations"]] == ["no-change"]
    assert has_persisted_state(report)


def test_no_files_matched_is_healthy_with_a_hint(harness: Harness) -> None:
    write_monitor(harness.workspace, "docs", FINGERPRINT)
    harness.tick()
    observation = stage(harness.explain("docs"), "observation")
    assert observation["status"] == "healthy"
    assert "matched no files" in observation["reason"]
    assert "watch.globs and watch.cwd" in observation["reason"]
    assert observation["details"]["globs"] == "*.txt"


def test_errored_latest_observation_is_a_failure(harness: Harness) -> None:
    fingerprint_monitor(harness)
    with harness.db.write() as conn:
        queries.add_history(
            conn,
            monitor_id="docs",
            workspace=str(harness.workspace),
            source_name="file-fingerprint",
            result="errored",
            data={"error": "permission denied: notes.txt"},
            now_ms=START - 5_000,
        )
    report = harness.explain("docs")
    observation = stage(report, "observation")
    assert observation["status"] == "failure"
    assert observation["reason"] == (
        f"The latest observation ({iso_from_ms(START - 5_000)}) errored: "
        "permission denied: notes.txt"
    )
    assert observation["details"]["error"] == "permission denied: notes.txt"
    assert stage(report, "materialization")["status"] == "pending"
    assert report["verdict"] == {
        "status": "failure",
        "stage": "observation",
        "reason": observation["reason"],
    }
    assert has_persisted_state(report)


def test_live_runtime_backoff_shows_in_scheduling(harness: Harness) -> None:
    write_monitor(harness.workspace, "flaky", "watch:\n  type: failing\n")
    harness.tick()
    harness.clock.advance(1_000)
    report = harness.explain("flaky", live=True)
    scheduling = stage(report, "scheduling")
    assert scheduling["status"] == "pending"
    assert scheduling["reason"].startswith("Backing off after 1 consecutive failure;")
    assert scheduling["details"]["consecutiveFailures"] == 1
    # The first retry waits the monitor's interval (30 s by default), never less.
    assert scheduling["details"]["retryAt"] == iso_from_ms(START + 30_000)
    assert scheduling["details"]["lastError"] == "upstream is down"
    assert "upstream is down" in stage(report, "observation")["reason"]
    assert report["verdict"]["stage"] == "observation"
    # In-process (no daemon) there is no backoff to report.
    assert stage(harness.explain("flaky"), "scheduling")["status"] == "ok"


def test_schedule_source_reports_the_next_cron_match(harness: Harness) -> None:
    # START is 2026-05-28T20:26:40Z; the next 21:00 UTC is the same day.
    write_monitor(harness.workspace, "daily", 'watch:\n  type: schedule\n  cron: "0 21 * * *"\n')
    scheduling = stage(harness.explain("daily"), "scheduling")
    assert scheduling["status"] == "ok"
    assert scheduling["details"]["nextDueAt"] == "2026-05-28T21:00:00.000Z"
    assert scheduling["reason"] == (
        "Not observed yet; due in 33m 20s, at 2026-05-28T21:00:00.000Z (cron '0 21 * * *' (UTC))."
    )


# --------------------------------------------------------------------------- notify


def test_held_debounce_batch_is_pending(harness: Harness) -> None:
    fingerprint_monitor(harness, extra="notify:\n  strategy: debounce\n  settle-for: 2m\n")
    harness.tick()  # baseline
    change_file(harness, "two, longer\n")
    harness.clock.advance(30_000)
    assert harness.tick().emitted_event_ids == []
    due_at = iso_from_ms(START + 30_000 + 120_000)
    report = harness.explain("docs")
    notify = stage(report, "notify")
    assert notify["status"] == "pending"
    assert notify["reason"] == f"Debounce is holding 1 observation until {due_at}."
    assert notify["details"] == {
        "strategy": "debounce",
        "kind": "debounce",
        "observations": 1,
        "dueAt": due_at,
        "overdue": False,
    }
    assert stage(report, "observation")["status"] == "ok"
    assert stage(report, "materialization")["status"] == "pending"
    assert "holding" in stage(report, "materialization")["reason"]
    assert report["verdict"]["stage"] == "notify"
    assert report["verdict"]["status"] == "pending"

    harness.clock.advance(200_000)
    overdue = stage(harness.explain("docs"), "notify")
    assert overdue["status"] == "pending"
    assert overdue["details"]["overdue"] is True
    assert "flush on the next evaluation" in overdue["reason"]

    harness.tick()  # the due tick releases the batch
    released = harness.explain("docs")
    assert stage(released, "observation")["reason"].endswith("released 1 held observation.")
    assert stage(released, "notify")["status"] == "ok"
    assert stage(released, "materialization")["status"] == "ok"


def test_throttle_window_is_pending(harness: Harness) -> None:
    fingerprint_monitor(harness, extra="notify:\n  strategy: throttle\n  suppress-for: 10m\n")
    harness.tick()
    change_file(harness, "two, longer\n")
    harness.clock.advance(30_000)
    assert len(harness.tick().emitted_event_ids) == 1
    report = harness.explain("docs")
    notify = stage(report, "notify")
    assert notify["status"] == "pending"
    until = iso_from_ms(START + 30_000 + 600_000)
    assert notify["reason"] == f"Throttle is dropping new observations until {until}."
    assert stage(report, "materialization")["status"] == "ok"


def test_rollup_accumulation_is_pending_until_the_window(harness: Harness) -> None:
    fingerprint_monitor(harness, extra='notify:\n  strategy: rollup\n  window: "0 21 * * *"\n')
    harness.tick()
    change_file(harness, "two, longer\n")
    harness.clock.advance(30_000)
    assert harness.tick().emitted_event_ids == []
    notify = stage(harness.explain("docs"), "notify")
    assert notify["status"] == "pending"
    assert notify["details"]["observations"] == 1
    assert notify["details"]["nextWindowAt"] == "2026-05-28T21:00:00.000Z"
    assert notify["reason"] == (
        "Rollup is holding 1 observation until the next window '0 21 * * *'"
        " (next at 2026-05-28T21:00:00.000Z)."
    )


# ----------------------------------------------------------------- materialization, delivery


def test_events_without_sessions_are_pending_at_delivery(harness: Harness) -> None:
    fingerprint_monitor(harness)
    harness.tick()
    change_file(harness, "two, longer\n")
    harness.clock.advance(30_000)
    emitted = harness.tick().emitted_event_ids
    assert len(emitted) == 1
    report = harness.explain("docs")
    materialization = stage(report, "materialization")
    assert materialization["status"] == "ok"
    title = f"File changed: {harness.workspace / 'notes.txt'}"
    assert materialization["reason"] == (
        f'1 event stored; latest "{title}" at {iso_from_ms(START + 30_000)}.'
    )
    assert materialization["details"]["latestEventId"] == emitted[0]
    delivery = stage(report, "delivery")
    assert delivery["status"] == "pending"
    assert "No lead session is registered for this workspace" in delivery["reason"]
    assert "`agentmonitors session start`" in delivery["reason"]
    assert "SessionStart" in delivery["reason"]
    assert report["verdict"]["stage"] == "delivery"
    assert report["verdict"]["status"] == "pending"
    assert [event["id"] for event in report["events"]] == emitted
    assert report["events"][0]["createdAt"] == iso_from_ms(START + 30_000)
    assert report["projections"] == []
    assert report["leadSessions"] == []
    assert [row["result"] for row in report["observations"]] == ["triggered", "no-change"]


def test_projections_are_counted_per_lead_session(harness: Harness) -> None:
    fingerprint_monitor(harness)
    harness.add_session("S1", str(harness.workspace), START)
    harness.add_session("S2", None, START)
    harness.add_session("OTHER", "/elsewhere", START)
    harness.tick()
    for index, text in enumerate(("two, longer\n", "three, longer still\n"), start=1):
        change_file(harness, text)
        harness.clock.advance(30_000)
        assert len(harness.tick().emitted_event_ids) == 1, index
    with harness.db.read() as conn:
        first, second = (
            row[0]
            for row in conn.execute(
                "SELECT id FROM monitor_events WHERE monitor_id = 'docs' ORDER BY created_at, id"
            )
        )
    with harness.db.write() as conn:
        # S1 acknowledged the first event and has claimed the second.
        conn.execute(
            "UPDATE session_event_state SET first_notified_at = ?, acknowledged_at = ?"
            " WHERE session_id = 'S1' AND event_id = ?",
            (START // 1000 + 40, START // 1000 + 50, first),
        )
        conn.execute(
            "UPDATE session_event_state SET first_notified_at = ?, last_claim_lifecycle ="
            " 'turn-idle' WHERE session_id = 'S1' AND event_id = ?",
            (START // 1000 + 70, second),
        )
    before = harness.counts()
    report = harness.explain("docs")
    assert harness.counts() == before  # read-only
    delivery = stage(report, "delivery")
    assert delivery["status"] == "ok"
    assert delivery["reason"] == (
        "Events reached 2 sessions (S1: unread 0, claimed 1, acknowledged 1;"
        " S2: unread 2, claimed 0, acknowledged 0)."
    )
    assert delivery["details"]["unread"] == 2
    assert delivery["details"]["claimed"] == 1
    assert delivery["details"]["acknowledged"] == 1
    assert delivery["details"]["leadSessions"] == ["S1", "S2"]
    assert [session["id"] for session in report["leadSessions"]] == ["S1", "S2"]
    assert report["leadSessions"][0]["createdAt"] == iso_from_ms(START)
    states = {(item["sessionId"], item["eventId"]): item for item in report["projections"]}
    assert set(states) == {("S1", first), ("S1", second), ("S2", first), ("S2", second)}
    assert states["S1", first]["deliveryState"] == "acknowledged"
    assert states["S1", second]["deliveryState"] == "claimed"
    assert states["S1", second]["lastClaimLifecycle"] == "turn-idle"
    assert states["S2", second]["deliveryState"] == "unread"
    assert "acknowledgedAt" not in states["S2", second]
    assert report["verdict"] == {
        "status": "ok",
        "stage": "definition",
        "reason": "Monitor definition is valid; it needs no approval (it reads only the project).",
    }
    json.dumps(report)


def test_net_suppressed_projections_are_counted_apart(harness: Harness) -> None:
    fingerprint_monitor(harness)
    harness.add_session("S1", str(harness.workspace), START)
    harness.tick()
    change_file(harness, "two, longer\n")
    harness.clock.advance(30_000)
    (event_id,) = harness.tick().emitted_event_ids
    with harness.db.write() as conn:
        conn.execute(
            "UPDATE session_event_state SET first_notified_at = ?, net_suppressed_at = ?",
            (START // 1000 + 40, START // 1000 + 40),
        )
    report = harness.explain("docs")
    delivery = stage(report, "delivery")
    assert delivery["details"]["suppressed"] == 1
    assert delivery["details"]["claimed"] == 0
    assert "suppressed 1" in delivery["reason"]
    assert report["projections"][0]["eventId"] == event_id
    assert report["projections"][0]["netSuppressed"] is True


def test_session_registered_after_the_events_waits_for_the_next(harness: Harness) -> None:
    fingerprint_monitor(harness)
    harness.tick()
    change_file(harness, "two, longer\n")
    harness.clock.advance(30_000)
    harness.tick()
    harness.add_session("LATE", str(harness.workspace), START + 60_000)
    delivery = stage(harness.explain("docs"), "delivery")
    assert delivery["status"] == "pending"
    assert "registered after the latest event" in delivery["reason"]


def test_missing_projection_for_an_existing_session_is_a_failure(harness: Harness) -> None:
    fingerprint_monitor(harness)
    harness.add_session("S1", str(harness.workspace), START)
    harness.tick()
    change_file(harness, "two, longer\n")
    harness.clock.advance(30_000)
    harness.tick()
    with harness.db.write() as conn:
        conn.execute("DELETE FROM session_event_state")
    report = harness.explain("docs")
    assert stage(report, "delivery")["status"] == "failure"
    assert report["verdict"]["stage"] == "delivery"


def test_limits_and_workspace_scoping(harness: Harness) -> None:
    fingerprint_monitor(harness)
    harness.tick()
    for text in ("two, longer\n", "three, longer still\n"):
        change_file(harness, text)
        harness.clock.advance(30_000)
        harness.tick()
    with harness.db.write() as conn:
        queries.add_history(
            conn,
            monitor_id="docs",
            workspace="/elsewhere",
            source_name="file-fingerprint",
            result="errored",
            data={"error": "not ours"},
            now_ms=START + 100_000,
        )
    report = harness.explain("docs", history_limit=1, event_limit=1)
    assert [row["result"] for row in report["observations"]] == ["triggered"]
    assert len(report["events"]) == 1
    assert stage(report, "materialization")["details"]["count"] == 2
    assert stage(report, "observation")["status"] == "ok"
    empty = harness.explain("docs", history_limit=0, event_limit=0)
    assert empty["observations"] == []
    assert empty["events"] == []
    assert stage(empty, "materialization")["status"] == "ok"
    assert has_persisted_state(empty)


# --------------------------------------------------------------------------- text


def test_text_rendering_has_one_line_per_stage_and_the_verdict(harness: Harness) -> None:
    fingerprint_monitor(harness)
    harness.tick()
    change_file(harness, "two, longer\n")
    harness.clock.advance(30_000)
    harness.tick()
    report = harness.explain("docs")
    lines = render_explain_text(report).splitlines()
    assert lines[0] == "Monitor docs"
    assert lines[1] == (
        "✓ Definition: Monitor definition is valid; it needs no approval (it reads only the"
        " project)."
    )
    assert lines[2].startswith("✓ Scheduling: Last observed at ")
    assert lines[3].startswith("✓ Observation: The latest observation (")
    assert lines[4] == "✓ Notify state: No debounce, rollup or throttle hold is active."
    assert lines[5].startswith("✓ Materialization: 1 event stored; latest ")
    assert lines[6].startswith("⏳ Projection and delivery: No lead session is registered")
    assert lines[7] == (
        f"Verdict: pending at Projection and delivery - {stage(report, 'delivery')['reason']}"
    )
    assert len(lines) == 8


def test_text_rendering_glyphs_for_failure_and_healthy() -> None:
    report = {
        "monitorId": "m",
        "stages": [
            {"id": "definition", "label": "Definition", "status": "ok", "reason": "fine"},
            {"id": "observation", "label": "Observation", "status": "healthy", "reason": "idle"},
            {
                "id": "delivery",
                "label": "Projection and delivery",
                "status": "failure",
                "reason": "lost",
            },
        ],
        "verdict": {"status": "failure", "stage": "delivery", "reason": "lost"},
    }
    assert render_explain_text(report) == (
        "Monitor m\n"
        "✓ Definition: fine\n"
        "○ Observation: idle\n"
        "✗ Projection and delivery: lost\n"
        "Verdict: failure at Projection and delivery - lost"
    )


def test_offline_the_delivery_stage_names_each_sessions_hold_and_listeners(
    harness: Harness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    from agentmonitors.delivery.heartbeats import HOOK_TTL_MS, write_heartbeat
    from agentmonitors.delivery.service import DeliveryService

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    fingerprint_monitor(harness)
    harness.add_session("S1", str(harness.workspace), START)
    harness.tick()
    change_file(harness, "two, longer\n")
    harness.clock.advance(30_000)
    [first] = harness.tick().emitted_event_ids
    service = DeliveryService(harness.db, harness.clock)
    claim = service.claim("S1", "turn-interruptible")
    assert claim is not None and claim["urgency"] == "normal"
    change_file(harness, "three, longer still\n")
    harness.clock.advance(30_000)
    assert len(harness.tick().emitted_event_ids) == 1
    write_heartbeat(
        "hook",
        "S1",
        workspace=str(harness.workspace),
        socket_path=str(tmp_path / "sock"),
        host_session_id="S1",
        session_id="S1",
    )
    wall = time.time_ns() // 1_000_000

    report = harness.explain("docs", wall_ms=wall)
    delivery = stage(report, "delivery")
    assert delivery["status"] == "ok"
    [entry] = delivery["details"]["sessions"]
    ack = f"agentmonitors events ack --session S1 --event-ids {first}"
    assert entry["hold"] == "coalesced-until-ack"
    assert entry["holds"][0]["ackCommand"] == ack
    assert (entry["monitorPending"], entry["monitorClaimed"]) == (1, 1)
    assert entry["listeners"]["hook"]["listening"] is True
    assert entry["listeners"]["channel"] is None
    [finding] = delivery["details"]["reminderSuppression"]
    assert (finding["sessionId"], finding["reason"]) == ("S1", "coalesced-until-ack")
    text = render_explain_text(report).splitlines()
    at = text.index(f"✓ Projection and delivery: {delivery['reason']}")
    assert text[at + 1].startswith("    S1: unread 1, claimed 1, acknowledged 0 - held: ")
    assert f"`{ack}`" in text[at + 1] and text[at + 2].startswith("Verdict: ")

    # A day later by the wall clock, the hook's record is past its TTL.
    later = harness.explain("docs", wall_ms=wall + HOOK_TTL_MS + 10_000)
    [entry] = stage(later, "delivery")["details"]["sessions"]
    assert entry["listeners"]["hook"]["listening"] is False
    assert "hook silent since " in entry["line"]


def test_a_session_registered_in_the_events_second_is_a_late_joiner(harness: Harness) -> None:
    fingerprint_monitor(harness)
    harness.tick()
    change_file(harness, "two, longer\n")
    harness.clock.advance(30_000)
    harness.tick()
    # Timestamps are whole seconds: registered just after the event, in the same second.
    harness.add_session("SAME", str(harness.workspace), harness.clock.now_ms())
    delivery = stage(harness.explain("docs"), "delivery")
    assert delivery["status"] == "pending"
    assert "registered after the latest event" in delivery["reason"]


def test_an_undelivered_event_is_explained_in_the_users_words(harness: Harness) -> None:
    fingerprint_monitor(harness)
    harness.add_session("S1", str(harness.workspace), START)
    harness.tick()
    change_file(harness, "two, longer\n")
    harness.clock.advance(30_000)
    harness.tick()
    with harness.db.write() as conn:
        conn.execute("DELETE FROM session_event_state")
    report = harness.explain("docs")
    delivery = stage(report, "delivery")
    assert delivery["status"] == "failure"
    assert delivery["reason"].startswith("None of the 1 registered session received")
    assert "agentmonitors daemon stop" in delivery["reason"]
    # No table names, no pipeline words a user cannot act on.
    for reason in [item["reason"] for item in report["stages"]]:
        for internal in ("session_event_state", "monitor_events", "projection", "materializ"):
            assert internal not in reason, reason
