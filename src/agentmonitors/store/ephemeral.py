"""Agent-declared watches (``ephemeral_monitors``): rows, their JSON record, queries.

A watch belongs to the session that declared it. Its row is never deleted: reaping
only flips ``status`` to ``reaped``, so the events it produced stay explainable and
a reaped watch can never be mistaken for a live one after a restart.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from agentmonitors.fastpath.lean_dataclass import dataclass
from agentmonitors.store.records import dumps, iso_from_seconds, loads

EPHEMERAL_PREFIX = "ephemeral:"
ACTIVE = "active"
REAPED = "reaped"


def is_ephemeral(monitor_id: str) -> bool:
    """Whether ``monitor_id`` names a watch; folder-derived ids never contain ``/``."""
    return monitor_id.startswith(EPHEMERAL_PREFIX)


def ephemeral_id(session_id: str, unique: str) -> str:
    return f"{EPHEMERAL_PREFIX}{session_id}/{unique}"


@dataclass(frozen=True)
class EphemeralRow:
    id: str
    session_id: str
    workspace_path: str | None
    source_name: str
    scope: dict[str, Any]
    urgency: str
    urgency_max: str
    instruction: str
    display_name: str | None
    status: str
    created_at: int
    updated_at: int
    reaped_at: int | None = None

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> EphemeralRow:
        scope = loads(row["scope"], {})
        return cls(
            id=str(row["id"]),
            session_id=str(row["session_id"]),
            workspace_path=row["workspace_path"],
            source_name=str(row["source_name"]),
            scope=scope if isinstance(scope, dict) else {},
            urgency=str(row["urgency"]),
            urgency_max=str(row["urgency_max"]),
            instruction=str(row["instruction"] or ""),
            display_name=row["display_name"],
            status=str(row["status"]),
            created_at=int(row["created_at"]),
            updated_at=int(row["updated_at"]),
            reaped_at=row["reaped_at"],
        )

    @property
    def band(self) -> str:
        """The urgency as authored: a level, or ``lo..hi`` for a band."""
        if self.urgency == self.urgency_max:
            return self.urgency
        return f"{self.urgency}..{self.urgency_max}"

    def to_json(self) -> dict[str, Any]:
        """``EphemeralMonitorRecord``; absent optionals are left out."""
        record: dict[str, Any] = {
            "id": self.id,
            "sessionId": self.session_id,
            "workspacePath": self.workspace_path,
            "sourceName": self.source_name,
            "scope": listed_scope(self.scope),
            "urgency": self.urgency,
            "urgencyMax": self.urgency_max,
            "instruction": self.instruction,
        }
        if self.display_name:
            record["displayName"] = self.display_name
        record["status"] = self.status
        record["createdAt"] = iso_from_seconds(self.created_at)
        record["updatedAt"] = iso_from_seconds(self.updated_at)
        if self.reaped_at is not None:
            record["reapedAt"] = iso_from_seconds(self.reaped_at)
        return record


HIDDEN_VALUE = "[redacted]"
"""What a listed ``env`` value reads as (the redaction module's mark)."""


def listed_scope(scope: dict[str, Any]) -> dict[str, Any]:
    """The scope as records show it: ``env`` names, never their values.

    Declarations carrying a credential are refused (``catalog/ephemeral.py``), but a
    value passed to a command is the agent's business, not every reader's; and rows
    written before that check keep theirs out of sight too (docs/architecture.md,
    "Secrets").
    """
    env = scope.get("env")
    if not isinstance(env, dict):
        return scope
    return {**scope, "env": {str(name): HIDDEN_VALUE for name in env}}


def insert_ephemeral(conn: sqlite3.Connection, row: EphemeralRow) -> None:
    conn.execute(
        "INSERT INTO ephemeral_monitors (id, session_id, workspace_path, source_name, scope,"
        " urgency, urgency_max, instruction, display_name, status, created_at, updated_at,"
        " reaped_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            row.id,
            row.session_id,
            row.workspace_path,
            row.source_name,
            dumps(row.scope),
            row.urgency,
            row.urgency_max,
            row.instruction,
            row.display_name,
            row.status,
            row.created_at,
            row.updated_at,
            row.reaped_at,
        ),
    )


def get_ephemeral(conn: sqlite3.Connection, monitor_id: str) -> EphemeralRow | None:
    row = conn.execute("SELECT * FROM ephemeral_monitors WHERE id = ?", (monitor_id,)).fetchone()
    return None if row is None else EphemeralRow.from_row(row)


def active_of_session(conn: sqlite3.Connection, session_id: str) -> list[EphemeralRow]:
    """The session's active watches, oldest first."""
    rows = conn.execute(
        "SELECT * FROM ephemeral_monitors WHERE session_id = ? AND status = 'active'"
        " ORDER BY created_at, id",
        (session_id,),
    )
    return [EphemeralRow.from_row(row) for row in rows]


def active_of_workspace(conn: sqlite3.Connection, workspace: str) -> list[EphemeralRow]:
    """Every active watch a workspace's runtime evaluates, oldest first."""
    rows = conn.execute(
        "SELECT * FROM ephemeral_monitors WHERE status = 'active' AND workspace_path = ?"
        " ORDER BY created_at, id",
        (workspace,),
    )
    return [EphemeralRow.from_row(row) for row in rows]


def reap_ephemeral(conn: sqlite3.Connection, monitor_id: str, now_s: int) -> None:
    """``active`` → ``reaped``; a reaped row keeps its first ``reaped_at``."""
    conn.execute(
        "UPDATE ephemeral_monitors SET status = 'reaped', reaped_at = ?, updated_at = ?"
        " WHERE id = ? AND status = 'active'",
        (now_s, now_s, monitor_id),
    )


def live_recipient(conn: sqlite3.Connection, monitor_id: str) -> str | None:
    """The declaring session, while the watch and that lead session are both active."""
    row = conn.execute(
        "SELECT s.id FROM ephemeral_monitors e JOIN agent_sessions s ON s.id = e.session_id"
        " WHERE e.id = ? AND e.status = 'active' AND s.status = 'active' AND s.role = 'lead'",
        (monitor_id,),
    ).fetchone()
    return None if row is None else str(row[0])
