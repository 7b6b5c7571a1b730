"""Agent sessions: register or resume, close, list, touch, and the Claude Code defaults.

Functions taking a connection run inside the caller's transaction.
"""

from __future__ import annotations

import sqlite3

from agentmonitors.delivery.dormancy import make_dormant
from agentmonitors.delivery.records import SessionNotFound
from agentmonitors.delivery.unread import carry, version
from agentmonitors.fastpath.lean_dataclass import dataclass
from agentmonitors.fastpath.ulid import new_id


@dataclass(frozen=True)
class SessionInput:
    """What ``session.open`` registers; ``role``/``workspace_path`` None = keep or default."""

    adapter: str
    host_session_id: str
    agent_identity: str
    hook_state_path: str
    workspace_path: str | None = None
    role: str | None = None


def get_session(conn: sqlite3.Connection, session_id: str) -> sqlite3.Row:
    row: sqlite3.Row | None = conn.execute(
        "SELECT * FROM agent_sessions WHERE id = ?", (session_id,)
    ).fetchone()
    if row is None:
        raise SessionNotFound(session_id)
    return row


def open_session(conn: sqlite3.Connection, spec: SessionInput, now_ms: int) -> sqlite3.Row:
    """Resume the ``(adapter, host session id)`` row, else insert one; ``baseline_at`` is kept."""
    now = now_ms // 1000
    existing = conn.execute(
        "SELECT * FROM agent_sessions WHERE adapter = ? AND host_session_id = ?",
        (spec.adapter, spec.host_session_id),
    ).fetchone()
    if existing is not None:
        conn.execute(
            "UPDATE agent_sessions SET agent_identity = ?, role = ?, workspace_path = ?,"
            " hook_state_path = ?, status = 'active', last_active_at = ?, dormant_at = NULL,"
            " updated_at = ? WHERE id = ?",
            (
                spec.agent_identity,
                spec.role if spec.role is not None else existing["role"],
                spec.workspace_path
                if spec.workspace_path is not None
                else existing["workspace_path"],
                spec.hook_state_path,
                now,
                now,
                existing["id"],
            ),
        )
        return get_session(conn, str(existing["id"]))
    session_id = new_id(now_ms)
    conn.execute(
        "INSERT INTO agent_sessions (id, adapter, host_session_id, agent_identity, role,"
        " workspace_path, hook_state_path, status, baseline_at, last_active_at, created_at,"
        " updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'active', ?, ?, ?, ?)",
        (
            session_id,
            spec.adapter,
            spec.host_session_id,
            spec.agent_identity,
            spec.role if spec.role is not None else "lead",
            spec.workspace_path,
            spec.hook_state_path,
            now,
            now,
            now,
            now,
        ),
    )
    return get_session(conn, session_id)


def close_session(conn: sqlite3.Connection, session_id: str, now_ms: int) -> sqlite3.Row:
    """Mark the session dormant and reap its ephemeral monitors; nothing is deleted."""
    get_session(conn, session_id)
    make_dormant(conn, session_id, now_ms // 1000)
    return get_session(conn, session_id)


def touch_session(conn: sqlite3.Connection, session_id: str, now_ms: int) -> None:
    now = now_ms // 1000
    before = version(conn)
    conn.execute(
        "UPDATE agent_sessions SET last_active_at = ?, updated_at = ? WHERE id = ?",
        (now, now, session_id),
    )
    # Every hook call touches its session: that must not cost a re-read of its rows.
    carry(conn, before)


def stamp_recap(conn: sqlite3.Connection, session_id: str, now_ms: int) -> None:
    now = now_ms // 1000
    before = version(conn)
    conn.execute(
        "UPDATE agent_sessions SET last_recap_at = ?, last_active_at = ?, updated_at = ?"
        " WHERE id = ?",
        (now, now, now, session_id),
    )
    carry(conn, before)


def list_sessions(conn: sqlite3.Connection) -> list[sqlite3.Row]:
    rows: list[sqlite3.Row] = conn.execute(
        "SELECT * FROM agent_sessions ORDER BY updated_at DESC, id DESC"
    ).fetchall()
    return rows


def find_by_host(conn: sqlite3.Connection, host_session_id: str) -> sqlite3.Row | None:
    """The most recently updated session of this host session id, of any adapter."""
    row: sqlite3.Row | None = conn.execute(
        "SELECT * FROM agent_sessions WHERE host_session_id = ?"
        " ORDER BY updated_at DESC, id DESC LIMIT 1",
        (host_session_id,),
    ).fetchone()
    return row


def sessions_for_workspace(conn: sqlite3.Connection, workspace: str | None) -> list[sqlite3.Row]:
    """Sessions of ``workspace`` plus global ones (only global ones for a None workspace)."""
    if workspace is None:
        rows: list[sqlite3.Row] = conn.execute(
            "SELECT * FROM agent_sessions WHERE workspace_path IS NULL ORDER BY created_at, id"
        ).fetchall()
    else:
        rows = conn.execute(
            "SELECT * FROM agent_sessions WHERE workspace_path = ? OR workspace_path IS NULL"
            " ORDER BY created_at, id",
            (workspace,),
        ).fetchall()
    return rows
