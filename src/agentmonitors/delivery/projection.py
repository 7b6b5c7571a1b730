"""Projection: one shared event row fanned out to every session that should hear of it.

Each recipient gets a ``session_event_state`` row. When the event carries a snapshot,
the recipient's diff is taken against *its* cursor (the last artifact it was shown),
so a session that has not looked in a while sees everything that changed since.
"""

from __future__ import annotations

import sqlite3

from agentmonitors.delivery.watches import watch_recipients
from agentmonitors.diff import build_diff
from agentmonitors.fastpath.ulid import new_id
from agentmonitors.store.ephemeral import is_ephemeral
from agentmonitors.store.records import EventRow


def projection_targets(conn: sqlite3.Connection, event: EventRow) -> list[str]:
    """Lead sessions of the event's workspace (or global ones), dormant ones included.

    An agent-declared watch's event goes to its declaring session alone.
    """
    if is_ephemeral(event.monitor_id):
        return watch_recipients(conn, event.monitor_id)
    if event.workspace_path is None:
        rows = conn.execute(
            "SELECT id FROM agent_sessions WHERE role = 'lead' AND workspace_path IS NULL"
            " ORDER BY created_at, id"
        )
    else:
        rows = conn.execute(
            "SELECT id FROM agent_sessions WHERE role = 'lead'"
            " AND (workspace_path = ? OR workspace_path IS NULL) ORDER BY created_at, id",
            (event.workspace_path,),
        )
    return [str(row[0]) for row in rows]


def project_event(
    conn: sqlite3.Connection,
    event: EventRow,
    previous_snapshot: str | None,
    now_ms: int,
    targets: list[str] | None = None,
) -> list[str]:
    """Insert the recipients' rows (inside the caller's transaction); returns their ids."""
    recipients = projection_targets(conn, event) if targets is None else targets
    artifact = event.snapshot_text
    strategy = _strategy(event)
    object_key = event.object_key or event.monitor_id
    for session_id in recipients:
        diff: str | None = None
        if artifact is not None:
            cursor = conn.execute(
                "SELECT baseline_content FROM session_object_cursor WHERE session_id = ?"
                " AND monitor_id = ? AND object_key = ?"
                " AND COALESCE(workspace_path, '') = COALESCE(?, '')",
                (session_id, event.monitor_id, object_key, event.workspace_path),
            ).fetchone()
            if cursor is not None:
                diff = build_diff(str(cursor[0]), artifact, strategy)
            elif previous_snapshot is not None:
                # A new recipient starts from what existed before this event, so it
                # hears about this change but nothing older. Without that text there
                # is no version it saw: no cursor, rather than one at this event, which
                # would make its diff of a change it never saw "no difference".
                diff = build_diff(previous_snapshot, artifact, strategy)
                if not _unseen_before(conn, session_id, event, object_key):
                    conn.execute(
                        "INSERT INTO session_object_cursor (id, session_id, monitor_id,"
                        " object_key, workspace_path, baseline_snapshot_id, baseline_content,"
                        " updated_at) VALUES (?, ?, ?, ?, ?, NULL, ?, ?)",
                        (
                            new_id(now_ms),
                            session_id,
                            event.monitor_id,
                            object_key,
                            event.workspace_path,
                            previous_snapshot,
                            now_ms // 1000,
                        ),
                    )
        conn.execute(
            "INSERT INTO session_event_state (id, session_id, event_id, diff_text, created_at,"
            " updated_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (new_id(now_ms), session_id, event.id, diff, event.created_at, event.created_at),
        )
    return recipients


def _unseen_before(
    conn: sqlite3.Connection, session_id: str, event: EventRow, object_key: str
) -> bool:
    """Whether the session holds an earlier, unacknowledged event of this object: what
    existed before ``event`` is then newer than anything the session saw."""
    row = conn.execute(
        "SELECT 1 FROM session_event_state s CROSS JOIN monitor_events e ON e.id = s.event_id"
        " WHERE s.session_id = ? AND s.acknowledged_at IS NULL AND e.monitor_id = ?"
        " AND COALESCE(e.object_key, e.monitor_id) = ? AND e.workspace_path IS ? LIMIT 1",
        (session_id, event.monitor_id, object_key, event.workspace_path),
    ).fetchone()
    return row is not None


def _strategy(event: EventRow) -> str | None:
    metadata = event.snapshot_metadata
    if isinstance(metadata, dict) and isinstance(metadata.get("strategy"), str):
        return str(metadata["strategy"])
    return None
