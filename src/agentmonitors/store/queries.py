"""Reads and writes of monitor state, observation history and events.

Functions taking a ``sqlite3.Connection`` run inside the caller's transaction, so a
caller can make several of them atomic; the ``Database`` methods open their own.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from agentmonitors.fastpath.ulid import new_id
from agentmonitors.store import baseline_packs, state_parts
from agentmonitors.store.database import Database
from agentmonitors.store.records import (
    NOT_READ,
    EventRow,
    HistoryRow,
    MonitorStateRow,
    dumps,
    loads,
    to_seconds,
)

DEFAULT_HISTORY_LIMIT = 50


def _rows(conn: sqlite3.Connection, sql: str, params: tuple[Any, ...]) -> list[sqlite3.Row]:
    rows: list[sqlite3.Row] = conn.execute(sql, params).fetchall()
    return rows


# --------------------------------------------------------------------------- monitor state


_STATE_KEY = "monitor_id = ? AND COALESCE(workspace_path, '') = COALESCE(?, '')"


def load_monitor_state(
    conn: sqlite3.Connection,
    monitor_id: str,
    workspace: str | None,
    *,
    with_source_state: bool = True,
) -> MonitorStateRow | None:
    """The monitor's row; without ``with_source_state`` its ``source_state`` is
    ``NOT_READ`` (read it with :func:`load_source_state` when it is needed)."""
    row = conn.execute(
        "SELECT last_observation_at, notify_state, updated_at, state_token"
        + (", id, source_state" if with_source_state else "")
        + f" FROM monitor_state WHERE {_STATE_KEY}",
        (monitor_id, workspace),
    ).fetchone()
    if row is None:
        return None
    last, notify_text, updated, token = row[:4]
    notify = loads(notify_text, {})
    return MonitorStateRow(
        last_observation_at_ms=None if last is None else int(last) * 1000,
        source_state=_source_state(conn, row[4], row[5]) if with_source_state else NOT_READ,
        notify_state=notify if isinstance(notify, dict) else {},
        updated_at_ms=int(updated) * 1000,
        state_token=token,
    )


def load_source_state(conn: sqlite3.Connection, monitor_id: str, workspace: str | None) -> Any:
    """The monitor's stored source state, or None when it has none."""
    row = conn.execute(
        f"SELECT id, source_state FROM monitor_state WHERE {_STATE_KEY}", (monitor_id, workspace)
    ).fetchone()
    return None if row is None else _source_state(conn, row[0], row[1])


def _source_state(conn: sqlite3.Connection, state_id: str, text: str | None) -> Any:
    """A row's source state, merged from its parts when stored in parts."""
    if text == state_parts.PARTED:
        return state_parts.read(conn, state_id)
    return loads(text, None)


def save_monitor_state(
    conn: sqlite3.Connection,
    monitor_id: str,
    workspace: str | None,
    *,
    now_ms: int,
    notify_state: dict[str, Any],
    last_observation_at_ms: int | None = None,
    source_state: Any = None,
    notify_only: bool = False,
    source_unchanged: bool = False,
    state_token: str | None = None,
) -> None:
    """Upsert a monitor's row; ``notify_only`` leaves the observation fields alone.

    ``source_unchanged`` says ``source_state`` is what the row already holds, so it
    is not written again (for a large state, most of a tick's cost); it is written
    only when the row has gone meanwhile (as ``{}`` when it was never read:
    ``NOT_READ``). ``state_token`` is stored with the observation fields (see
    ``ObservationResult.state_token``).
    """
    notify_text = dumps(notify_state)
    now_s = to_seconds(now_ms)
    last_s = None if last_observation_at_ms is None else to_seconds(last_observation_at_ms)
    if source_unchanged:
        updated = conn.execute(
            "UPDATE monitor_state SET last_observation_at = ?, notify_state = ?,"
            f" updated_at = ?, state_token = ? WHERE {_STATE_KEY}",
            (last_s, notify_text, now_s, state_token, monitor_id, workspace),
        )
        if updated.rowcount > 0:
            return
        if source_state is NOT_READ:
            source_state, state_token = {}, None
    if notify_only:
        conn.execute(
            "INSERT INTO monitor_state (id, monitor_id, workspace_path, notify_state, updated_at)"
            " VALUES (?, ?, ?, ?, ?)"
            " ON CONFLICT (monitor_id, COALESCE(workspace_path, '')) DO UPDATE SET"
            " notify_state = excluded.notify_state, updated_at = excluded.updated_at",
            (new_id(now_ms), monitor_id, workspace, notify_text, now_s),
        )
        return
    parted = state_parts.is_parted(source_state)
    state_id = conn.execute(
        "INSERT INTO monitor_state (id, monitor_id, workspace_path, last_observation_at,"
        " source_state, notify_state, updated_at, state_token) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (monitor_id, COALESCE(workspace_path, '')) DO UPDATE SET"
        " last_observation_at = excluded.last_observation_at,"
        " source_state = excluded.source_state, notify_state = excluded.notify_state,"
        " updated_at = excluded.updated_at, state_token = excluded.state_token"
        " RETURNING id",
        (
            new_id(now_ms),
            monitor_id,
            workspace,
            last_s,
            state_parts.PARTED
            if parted
            else dumps(source_state if source_state is not None else {}),
            notify_text,
            now_s,
            state_token,
        ),
    ).fetchone()[0]
    if parted:
        # A large state (store/state_parts.py): only the parts that moved are written.
        state_parts.write(conn, state_id, source_state)


# --------------------------------------------------------------------------- history


def add_history(
    conn: sqlite3.Connection,
    *,
    monitor_id: str,
    workspace: str | None,
    source_name: str,
    result: str,
    data: dict[str, Any],
    now_ms: int,
) -> str:
    row_id = new_id(now_ms)
    conn.execute(
        "INSERT INTO observation_history (id, monitor_id, workspace_path, source_name,"
        " observation_data, result, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (row_id, monitor_id, workspace, source_name, dumps(data), result, to_seconds(now_ms)),
    )
    return row_id


def _history_filter(monitor_id: str | None, workspace: str | None) -> tuple[str, list[Any]]:
    """The WHERE clause of a history listing and its parameters."""
    where = []
    params: list[Any] = []
    if monitor_id is not None:
        where.append("monitor_id = ?")
        params.append(monitor_id)
    else:
        where.append("monitor_id NOT LIKE 'ephemeral:%'")
    if workspace is not None:
        where.append("workspace_path = ?")
        params.append(workspace)
    return " AND ".join(where), params


def list_history(
    db: Database,
    *,
    monitor_id: str | None = None,
    workspace: str | None = None,
    limit: int = DEFAULT_HISTORY_LIMIT,
) -> list[HistoryRow]:
    """Newest first. A workspace filter is an exact match; ephemeral ids need naming."""
    where, params = _history_filter(monitor_id, workspace)
    sql = (
        f"SELECT * FROM observation_history WHERE {where} ORDER BY created_at DESC, id DESC LIMIT ?"
    )
    params.append(max(0, limit))
    with db.read() as conn:
        return [HistoryRow.from_row(row) for row in _rows(conn, sql, tuple(params))]


def count_history(
    db: Database, *, monitor_id: str | None = None, workspace: str | None = None
) -> int:
    """How many rows :func:`list_history` would list with no limit."""
    where, params = _history_filter(monitor_id, workspace)
    with db.read() as conn:
        row = conn.execute(
            f"SELECT COUNT(*) FROM observation_history WHERE {where}", tuple(params)
        ).fetchone()
    return int(row[0])


# --------------------------------------------------------------------------- events


def insert_event(conn: sqlite3.Connection, event: EventRow) -> None:
    conn.execute(
        "INSERT INTO monitor_events (id, workspace_path, monitor_id, source_name, urgency, title,"
        " body, summary, payload, snapshot_metadata, snapshot_text, diff_text, object_key,"
        " baseline_strategy, query_scope, tags, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            event.id,
            event.workspace_path,
            event.monitor_id,
            event.source_name,
            event.urgency,
            event.title,
            event.body,
            event.summary,
            dumps(event.payload),
            dumps(event.snapshot_metadata),
            event.snapshot_text,
            event.diff_text,
            event.object_key,
            event.baseline_strategy,
            dumps(event.query_scope),
            dumps(event.tags),
            event.created_at,
        ),
    )


def latest_snapshot(
    conn: sqlite3.Connection,
    workspace: str | None,
    monitor_id: str,
    object_key: str,
    packs: baseline_packs.PackReader | None = None,
) -> str | None:
    """The object's newest snapshot text: its newest row, else what the monitor's packed
    baseline saw of it (store/baseline_packs.py: every row is newer than the packs).
    ``packs``, the monitor's reader, spares a caller asking many keys a decode each."""
    row = conn.execute(
        "SELECT content FROM monitor_snapshots WHERE monitor_id = ? AND object_key = ?"
        " AND workspace_path IS ? ORDER BY created_at DESC, id DESC LIMIT 1",
        (monitor_id, object_key, workspace),
    ).fetchone()
    if row is not None:
        return str(row[0])
    if packs is None:
        packs = baseline_packs.PackReader(conn, workspace, monitor_id)
    packed = packs.text(object_key)
    return None if packed is None else packed[0]


def insert_snapshot(
    conn: sqlite3.Connection,
    *,
    workspace: str | None,
    monitor_id: str,
    object_key: str,
    event_id: str,
    content: str,
    now_ms: int,
) -> None:
    conn.execute(
        "INSERT INTO monitor_snapshots (id, workspace_path, monitor_id, object_key, event_id,"
        " content, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (new_id(now_ms), workspace, monitor_id, object_key, event_id, content, to_seconds(now_ms)),
    )


def has_snapshots(conn: sqlite3.Connection, workspace: str | None, monitor_id: str) -> bool:
    """Whether the monitor has kept any snapshot in ``workspace``, packed or not."""
    return (
        conn.execute(
            "SELECT 1 FROM monitor_snapshots WHERE monitor_id = ? AND workspace_path IS ? LIMIT 1",
            (monitor_id, workspace),
        ).fetchone()
        is not None
    ) or baseline_packs.exists(conn, workspace, monitor_id)


def insert_snapshots(
    conn: sqlite3.Connection,
    *,
    workspace: str | None,
    monitor_id: str,
    event_id: str,
    contents: list[tuple[str, str]],
    now_ms: int,
) -> None:
    """:func:`insert_snapshot` for each ``(object_key, content)``, in one statement."""
    created = to_seconds(now_ms)
    conn.executemany(
        "INSERT INTO monitor_snapshots (id, workspace_path, monitor_id, object_key, event_id,"
        " content, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [
            (new_id(now_ms), workspace, monitor_id, key, event_id, content, created)
            for key, content in contents
        ],
    )


def list_monitor_events(
    db: Database, *, monitor_id: str, workspace: str | None, limit: int
) -> list[EventRow]:
    """A monitor's events, newest first; a workspace filter also admits global rows."""
    sql = (
        "SELECT * FROM monitor_events WHERE monitor_id = ?"
        " AND (workspace_path IS ? OR workspace_path IS NULL)"
        " ORDER BY created_at DESC, id DESC LIMIT ?"
    )
    with db.read() as conn:
        rows = _rows(conn, sql, (monitor_id, workspace, max(0, limit)))
    return [EventRow.from_row(row) for row in rows]


def count_rows(db: Database, table: str) -> int:
    with db.read() as conn:
        return int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


def session_counts(db: Database, workspace: str | None = None) -> dict[str, int]:
    """Sessions of one workspace (or all when None), by status."""
    sql = "SELECT status, COUNT(*) FROM agent_sessions"
    params: tuple[Any, ...] = ()
    if workspace is not None:
        sql += " WHERE workspace_path = ?"
        params = (workspace,)
    sql += " GROUP BY status"
    counts = {"active": 0, "dormant": 0}
    with db.read() as conn:
        for status, count in conn.execute(sql, params):
            counts[str(status)] = int(count)
    counts["total"] = sum(counts.values())
    return counts
