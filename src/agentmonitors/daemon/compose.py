"""A workspace's runtime wired to delivery: what ``daemon run`` and ``daemon once`` both tick.

The runtime observes and stores events; it does not know sessions exist. The daemon
composes the two (docs/architecture.md, "Package graph"): each stored event is
projected into the workspace's sessions inside the event's own transaction, and idle
sessions are marked dormant before every tick.
"""

from __future__ import annotations

import sqlite3

from agentmonitors.clock import Clock
from agentmonitors.delivery.dormancy import mark_idle_sessions_dormant
from agentmonitors.runtime.tick import Runtime
from agentmonitors.sources.base import SourceRegistry
from agentmonitors.store.database import Database
from agentmonitors.store.records import EventRow


def _project(
    conn: sqlite3.Connection, event: EventRow, previous_snapshot: str | None, now_ms: int
) -> list[str]:
    # Lazy: most ticks (every one of an unchanged tree) store no event to project.
    from agentmonitors.delivery.projection import project_event

    return project_event(conn, event, previous_snapshot, now_ms)


def workspace_runtime(
    db: Database,
    workspace: str,
    registry: SourceRegistry,
    *,
    monitors_dir: str | None = None,
    clock: Clock | None = None,
    restore_backoff: bool = False,
) -> Runtime:
    runtime = Runtime(
        db,
        workspace,
        registry,
        monitors_dir=monitors_dir,
        clock=clock,
        restore_backoff=restore_backoff,
        on_event=_project,
    )
    runtime.before_tick.append(lambda now_ms: mark_idle_sessions_dormant(db, workspace, now_ms))
    return runtime
