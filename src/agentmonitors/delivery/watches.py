"""Agent-declared watches on the session side: who may declare, list, cancel, and receive.

A watch belongs to its declaring session alone: only that session lists or cancels
it, and its events are projected into that session only, while both are active.
Functions taking a connection run inside the caller's transaction.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from agentmonitors.delivery.sessions import get_session, touch_session
from agentmonitors.fastpath.ulid import new_id
from agentmonitors.store.ephemeral import (
    ACTIVE,
    EphemeralRow,
    active_of_session,
    ephemeral_id,
    get_ephemeral,
    insert_ephemeral,
    live_recipient,
    reap_ephemeral,
)


class WatchError(ValueError):
    """A watch request that changes nothing; the message is for the agent."""


def declaring_session(conn: sqlite3.Connection, session_id: str, workspace: str) -> sqlite3.Row:
    """The session a watch binds to; ``WatchError`` unless it can ever receive the events.

    It must be active and a lead session of this daemon's workspace: a subagent or a
    closed session would never be delivered to, and a watch is never made global.
    """
    session = get_session(conn, session_id)
    prefix = f'Cannot declare a watch for session "{session_id}"'
    if session["status"] != ACTIVE:
        raise WatchError(f"{prefix}: it is {session['status']}; a watch binds to an active session")
    if session["role"] != "lead":
        raise WatchError(
            f"{prefix}: it is a {session['role']} session and watches deliver to lead"
            " sessions only; declare it from the lead session"
        )
    bound = session["workspace_path"]
    if bound is not None and bound != workspace:
        raise WatchError(
            f"{prefix}: it belongs to {bound}, not to {workspace}, the workspace this"
            " daemon serves; use that workspace's socket"
        )
    return session


def register_watch(
    conn: sqlite3.Connection,
    session: sqlite3.Row,
    *,
    workspace: str,
    source_name: str,
    scope: dict[str, Any],
    band: tuple[str, str],
    instruction: str,
    display_name: str | None,
    now_ms: int,
) -> EphemeralRow:
    """Store a checked declaration and count it as the session's activity."""
    now = now_ms // 1000
    session_id = str(session["id"])
    row = EphemeralRow(
        id=ephemeral_id(session_id, new_id(now_ms)),
        session_id=session_id,
        # A global session's watch runs in the workspace whose daemon took it.
        workspace_path=session["workspace_path"] or workspace,
        source_name=source_name,
        scope=scope,
        urgency=band[0],
        urgency_max=band[1],
        instruction=instruction,
        display_name=display_name,
        status=ACTIVE,
        created_at=now,
        updated_at=now,
    )
    insert_ephemeral(conn, row)
    # A session that declares a watch and then waits in one long tool call makes no
    # hook calls; the declaration itself keeps it from going dormant.
    touch_session(conn, session_id, now_ms)
    return row


def list_watches(conn: sqlite3.Connection, session_id: str) -> list[EphemeralRow]:
    """The session's active watches, oldest first; ``SessionNotFound`` if unknown."""
    get_session(conn, session_id)
    return active_of_session(conn, session_id)


def cancel_watch(
    conn: sqlite3.Connection, session_id: str, monitor_id: str, now_ms: int
) -> EphemeralRow:
    """Reap the session's own watch; another session's id is reported as not found."""
    row = get_ephemeral(conn, monitor_id)
    if row is None or row.session_id != session_id:
        raise WatchError(
            f'Ephemeral monitor "{monitor_id}" was not found for session "{session_id}".'
        )
    reap_ephemeral(conn, monitor_id, now_ms // 1000)
    cancelled = get_ephemeral(conn, monitor_id)
    assert cancelled is not None
    return cancelled


def watch_recipients(conn: sqlite3.Connection, monitor_id: str) -> list[str]:
    """Who hears of a watch's event: its session, only while it and the watch are active.

    Checked as the event is stored: a cancel or close racing the tick keeps the
    event and projects it to nobody.
    """
    recipient = live_recipient(conn, monitor_id)
    return [] if recipient is None else [recipient]
