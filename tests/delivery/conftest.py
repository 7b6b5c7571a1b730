"""A real database file, a manual clock and events written through ``materialize``."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from agentmonitors.clock import ManualClock
from agentmonitors.delivery.events import EventQuery
from agentmonitors.delivery.projection import project_event
from agentmonitors.delivery.service import DeliveryService
from agentmonitors.monitor.model import UrgencyBand, UrgencyLevel
from agentmonitors.runtime.materialize import materialize
from agentmonitors.runtime.notify import CapturedMonitor, envelope_for
from agentmonitors.sources.observation import Observation
from agentmonitors.store.database import Database

START = 1_780_000_000_000  # a whole second, so created_at * 1000 == the emit time
SETTLE = 15_000


class World:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.workspace = str(root / "ws")
        self.clock = ManualClock(START)
        self.db = Database(str(root / "data" / "inbox.db"))
        self.service = DeliveryService(self.db, self.clock)

    # -------------------------------------------------------------- setup

    def session(
        self, host: str = "host-1", *, role: str | None = None, workspace: str | None = ""
    ) -> str:
        record = self.service.open_session(
            host, workspace_path=self.workspace if workspace == "" else workspace, role=role
        )
        return str(record["id"])

    def emit(
        self,
        urgency: UrgencyLevel = "normal",
        title: str = "Something changed",
        *,
        monitor: str = "build",
        summary: str | None = None,
        snapshot: str | None = None,
        object_key: str | None = None,
        strategy: str = "incremental",
        tags: tuple[str, ...] = (),
        scope: Mapping[str, str | list[str]] | None = None,
        salience: UrgencyLevel | None = None,
        band: UrgencyBand | None = None,
        workspace: str | None = "",
    ) -> str:
        captured = CapturedMonitor(
            id=monitor,
            display_name=monitor,
            file_path=f"{self.workspace}/.claude/monitors/{monitor}/MONITOR.md",
            instructions=f"Handle {monitor}.",
            source_name="scripted",
            name=None,
            band=band or UrgencyBand(urgency, urgency),
            baseline_strategy=strategy,
            tags=tags,
        )
        observation = Observation(
            title=title,
            summary=summary,
            snapshot_text=snapshot,
            object_key=object_key,
            query_scope=scope,
            salience=salience,
        )
        now = self.clock.now_ms()
        envelope = envelope_for(captured, observation, now)
        with self.db.write() as conn:
            event = materialize(
                conn,
                envelope,
                self.workspace if workspace == "" else workspace,
                now,
                project_event,
            )
        return event.id

    def advance(self, ms: int) -> None:
        self.clock.advance(ms)

    # -------------------------------------------------------------- inspection

    def rows(self, sql: str, *params: Any) -> list[dict[str, Any]]:
        with self.db.read() as conn:
            return [dict(row) for row in conn.execute(sql, params)]

    def state(self, session_id: str, event_id: str) -> dict[str, Any]:
        found = self.rows(
            "SELECT * FROM session_event_state WHERE session_id = ? AND event_id = ?",
            session_id,
            event_id,
        )
        assert len(found) == 1
        return found[0]

    def claimed_ids(self, session_id: str) -> set[str]:
        return {
            str(row["event_id"])
            for row in self.rows(
                "SELECT event_id FROM session_event_state WHERE session_id = ?"
                " AND first_notified_at IS NOT NULL",
                session_id,
            )
        }

    def unread_ids(self, session_id: str) -> list[str]:
        records = self.service.list_events(_query(session_id, unread_only=True))
        return [str(record["id"]) for record in records]


def _query(session_id: str, **options: Any) -> EventQuery:
    return EventQuery(session_id=session_id, **options)


def event_ids(claim: Mapping[str, Any] | None) -> list[str]:
    assert claim is not None
    return [str(event["eventId"]) for event in claim["events"]]


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    created = World(tmp_path)
    try:
        yield created
    finally:
        created.db.close()
