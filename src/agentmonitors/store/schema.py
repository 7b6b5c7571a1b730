"""The database schema and its forward migrations.

The tables and columns are the compatible ones (docs/compatibility.md, "Stored
state"), so a database the other tool created opens here unchanged. Version 0 is
"anything that tool may have left": its idempotent probes run first, then our own
steps, each recorded in ``PRAGMA user_version`` so it runs once.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable

from agentmonitors.store.state_parts import PARTED

SCHEMA_VERSION = 7

_TABLES = (
    """CREATE TABLE IF NOT EXISTS inbox_items (
      id TEXT PRIMARY KEY, session_id TEXT, monitor_id TEXT NOT NULL,
      state TEXT NOT NULL DEFAULT 'queued', urgency TEXT NOT NULL, title TEXT NOT NULL,
      body TEXT NOT NULL DEFAULT '', snapshot TEXT NOT NULL DEFAULT '{}',
      tags TEXT NOT NULL DEFAULT '[]', created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
      acked_at INTEGER, completed_at INTEGER)""",
    """CREATE TABLE IF NOT EXISTS agent_sessions (
      id TEXT PRIMARY KEY, adapter TEXT NOT NULL, host_session_id TEXT NOT NULL,
      agent_identity TEXT NOT NULL, role TEXT NOT NULL DEFAULT 'lead', workspace_path TEXT,
      hook_state_path TEXT NOT NULL, status TEXT NOT NULL, baseline_at INTEGER NOT NULL,
      last_active_at INTEGER NOT NULL, last_recap_at INTEGER, dormant_at INTEGER,
      created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS ephemeral_monitors (
      id TEXT PRIMARY KEY, session_id TEXT NOT NULL, workspace_path TEXT,
      source_name TEXT NOT NULL, scope TEXT NOT NULL DEFAULT '{}', urgency TEXT NOT NULL,
      urgency_max TEXT NOT NULL, instruction TEXT NOT NULL DEFAULT '', display_name TEXT,
      status TEXT NOT NULL DEFAULT 'active', created_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL, reaped_at INTEGER)""",
    """CREATE TABLE IF NOT EXISTS observation_history (
      id TEXT PRIMARY KEY, monitor_id TEXT NOT NULL, workspace_path TEXT,
      source_name TEXT NOT NULL, observation_data TEXT NOT NULL DEFAULT '{}',
      result TEXT NOT NULL, created_at INTEGER NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS object_event_suppressions (
      id TEXT PRIMARY KEY, monitor_id TEXT NOT NULL, object_key TEXT NOT NULL,
      workspace_path TEXT, reason TEXT NOT NULL DEFAULT 'verify-scratch',
      created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS monitor_events (
      id TEXT PRIMARY KEY, workspace_path TEXT, monitor_id TEXT NOT NULL,
      source_name TEXT NOT NULL, urgency TEXT NOT NULL, title TEXT NOT NULL,
      body TEXT NOT NULL DEFAULT '', summary TEXT NOT NULL DEFAULT '',
      payload TEXT NOT NULL DEFAULT '{}', snapshot_metadata TEXT NOT NULL DEFAULT '{}',
      snapshot_text TEXT, diff_text TEXT, object_key TEXT, baseline_strategy TEXT,
      query_scope TEXT NOT NULL DEFAULT '{}', tags TEXT NOT NULL DEFAULT '[]',
      created_at INTEGER NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS monitor_snapshots (
      id TEXT PRIMARY KEY, workspace_path TEXT, monitor_id TEXT NOT NULL,
      object_key TEXT NOT NULL, event_id TEXT NOT NULL, content TEXT NOT NULL,
      created_at INTEGER NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS session_event_state (
      id TEXT PRIMARY KEY, session_id TEXT NOT NULL, event_id TEXT NOT NULL,
      first_notified_at INTEGER, acknowledged_at INTEGER, last_claim_at INTEGER,
      last_claim_lifecycle TEXT, diff_text TEXT, interpret_decision TEXT, interpret_reason TEXT,
      interpret_digest TEXT, net_suppressed_at INTEGER, created_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS session_object_cursor (
      id TEXT PRIMARY KEY, session_id TEXT NOT NULL, monitor_id TEXT NOT NULL,
      object_key TEXT NOT NULL, workspace_path TEXT, baseline_snapshot_id TEXT,
      baseline_content TEXT NOT NULL DEFAULT '', updated_at INTEGER NOT NULL)""",
    """CREATE UNIQUE INDEX IF NOT EXISTS idx_session_object_cursor_key
      ON session_object_cursor
      (session_id, monitor_id, object_key, COALESCE(workspace_path, ''))""",
)

_MONITOR_STATE = (
    """CREATE TABLE IF NOT EXISTS monitor_state (
      id TEXT PRIMARY KEY, monitor_id TEXT NOT NULL, workspace_path TEXT,
      last_observation_at INTEGER, last_fingerprint TEXT,
      source_state TEXT NOT NULL DEFAULT '{}', notify_state TEXT NOT NULL DEFAULT '{}',
      updated_at INTEGER NOT NULL)""",
    """CREATE UNIQUE INDEX IF NOT EXISTS idx_monitor_state_key
      ON monitor_state (monitor_id, COALESCE(workspace_path, ''))""",
)

# Columns older databases may lack (each added with ADD COLUMN when missing).
_LATE_COLUMNS = (
    ("observation_history", "workspace_path", "TEXT"),
    ("monitor_events", "baseline_strategy", "TEXT"),
    ("session_event_state", "interpret_decision", "TEXT"),
    ("session_event_state", "interpret_reason", "TEXT"),
    ("session_event_state", "interpret_digest", "TEXT"),
    ("session_event_state", "diff_text", "TEXT"),
    ("session_event_state", "net_suppressed_at", "INTEGER"),
)


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}


def _table_exists(conn: sqlite3.Connection, table: str) -> bool:
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
    ).fetchone()
    return row is not None


def _workspace_of_monitor_file(file_path: object) -> str | None:
    """The project a legacy row's monitor file lived in: the parent of ``.claude``/``.codex``."""
    if not isinstance(file_path, str):
        return None
    parts = file_path.split("/")
    for index in range(len(parts) - 1, -1, -1):
        if parts[index] in (".claude", ".codex"):
            return "/".join(parts[:index]) or "/"
    return None


def _migrate_legacy_monitor_state(conn: sqlite3.Connection, new_id: Callable[[], str]) -> None:
    """Re-key a ``monitor_state`` table that predates workspaces.

    Only rows holding a pending notify batch are worth keeping; each held
    observation is re-filed under the workspace its monitor file lived in. Source
    state is dropped on purpose: it was shared across workspaces, so any of it could
    be another project's baseline.
    """
    if not _table_exists(conn, "monitor_state"):
        return
    if "workspace_path" in _columns(conn, "monitor_state"):
        return
    legacy = conn.execute(
        "SELECT monitor_id, last_observation_at, notify_state, updated_at FROM monitor_state"
    ).fetchall()
    conn.execute("DROP TABLE monitor_state")
    for statement in _MONITOR_STATE:
        conn.execute(statement)
    for monitor_id, last_observation_at, notify_text, updated_at in legacy:
        try:
            notify = json.loads(notify_text)
        except (TypeError, ValueError):
            continue
        if not isinstance(notify, dict):
            continue
        per_workspace: dict[str | None, dict[str, object]] = {}
        for key in ("pendingDebounce", "pendingRollup"):
            batch = notify.get(key)
            if not isinstance(batch, dict) or not isinstance(batch.get("observations"), list):
                continue
            for envelope in batch["observations"]:
                monitor = envelope.get("monitor") if isinstance(envelope, dict) else None
                workspace = _workspace_of_monitor_file(
                    monitor.get("filePath") if isinstance(monitor, dict) else None
                )
                state = per_workspace.setdefault(workspace, {})
                held = state.setdefault(key, {**batch, "observations": []})
                assert isinstance(held, dict)
                held["observations"].append(envelope)
        for workspace, state in per_workspace.items():
            conn.execute(
                "INSERT INTO monitor_state (id, monitor_id, workspace_path, last_observation_at,"
                " source_state, notify_state, updated_at) VALUES (?, ?, ?, ?, '{}', ?, ?)",
                (
                    new_id(),
                    monitor_id,
                    workspace,
                    last_observation_at,
                    json.dumps(state, ensure_ascii=False),
                    updated_at,
                ),
            )


def _compatible_schema(conn: sqlite3.Connection, new_id: Callable[[], str]) -> None:
    """Everything the compatible opener guarantees (idempotent)."""
    for statement in _TABLES:
        conn.execute(statement)
    _migrate_legacy_monitor_state(conn, new_id)
    for statement in _MONITOR_STATE:
        conn.execute(statement)
    for table, column, kind in _LATE_COLUMNS:
        if column not in _columns(conn, table):
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")


def _version_1(conn: sqlite3.Connection) -> None:
    """Uniqueness the compatible schema only promised in code, and indexes for our hot
    queries."""
    # Older databases may hold duplicates; keep the first row of each key.
    conn.execute(
        "DELETE FROM agent_sessions WHERE rowid NOT IN "
        "(SELECT MIN(rowid) FROM agent_sessions GROUP BY adapter, host_session_id)"
    )
    conn.execute(
        "DELETE FROM session_event_state WHERE rowid NOT IN "
        "(SELECT MIN(rowid) FROM session_event_state GROUP BY session_id, event_id)"
    )
    for statement in (
        "CREATE UNIQUE INDEX IF NOT EXISTS idx_agent_sessions_host"
        " ON agent_sessions (adapter, host_session_id)",
        "CREATE UNIQUE INDEX IF NOT EXISTS idx_session_event_state_key"
        " ON session_event_state (session_id, event_id)",
        "CREATE INDEX IF NOT EXISTS idx_session_event_state_event"
        " ON session_event_state (event_id)",
        "CREATE INDEX IF NOT EXISTS idx_monitor_events_monitor"
        " ON monitor_events (monitor_id, workspace_path, created_at)",
        "CREATE INDEX IF NOT EXISTS idx_monitor_snapshots_object"
        " ON monitor_snapshots (monitor_id, object_key, workspace_path, created_at, id)",
        "CREATE INDEX IF NOT EXISTS idx_observation_history_monitor"
        " ON observation_history (monitor_id, created_at)",
    ):
        conn.execute(statement)


def _version_2(conn: sqlite3.Connection) -> None:
    """An index over unacknowledged projections only.

    Every hook reads a session's unread rows; with the key index alone that read
    walked every projection the session ever had, so a long-lived session with a
    large acknowledged history slowed each prompt. A partial index grows with what
    is unread, not with history.
    """
    conn.execute(
        "CREATE INDEX IF NOT EXISTS idx_session_event_state_unread"
        " ON session_event_state (session_id) WHERE acknowledged_at IS NULL"
    )


def _version_3(conn: sqlite3.Connection) -> None:
    """A source's state token beside its state, never outliving it.

    A large state (file-fingerprint's over a big tree) is most of an unchanged tick's
    cost to read; the token lets the source see that nothing changed without reading
    it (docs/architecture.md, "Speed"). The trigger clears the token whenever the state
    is rewritten without a new one, by any writer: an older agentmonitors, or the other
    tool, which knows nothing of the column (docs/compatibility.md).
    """
    if "state_token" not in _columns(conn, "monitor_state"):
        conn.execute("ALTER TABLE monitor_state ADD COLUMN state_token TEXT")
    conn.execute(
        "CREATE TRIGGER IF NOT EXISTS monitor_state_token_follows_state"
        " AFTER UPDATE OF source_state ON monitor_state"
        " WHEN new.state_token IS old.state_token"
        " BEGIN UPDATE monitor_state SET state_token = NULL WHERE id = new.id; END"
    )


def _version_4(conn: sqlite3.Connection) -> None:
    """An index over each object's events, in time.

    When a session sees a version of an object, the diffs of its later unseen events of
    that object are taken again (docs/architecture.md, "The life of one event", step
    7): this reaches those few events by key, never the session's whole backlog.
    """
    conn.execute(
        "CREATE INDEX IF NOT EXISTS idx_monitor_events_object"
        " ON monitor_events (monitor_id, object_key, created_at)"
    )


def _version_5(conn: sqlite3.Connection) -> None:
    """Indexes in time over the tables that grow with every change.

    Retention (``store/retention.py``) walks what is older than its age in small
    batches; these let each batch start where the last one stopped instead of scanning
    the table.
    """
    conn.execute(
        "CREATE INDEX IF NOT EXISTS idx_monitor_events_created ON monitor_events (created_at, id)"
    )
    conn.execute(
        "CREATE INDEX IF NOT EXISTS idx_observation_history_created"
        " ON observation_history (created_at, id)"
    )
    conn.execute(
        "CREATE INDEX IF NOT EXISTS idx_monitor_snapshots_created"
        " ON monitor_snapshots (created_at, id)"
    )
    # A pruned event's snapshot is found by its event, not by a scan of every version.
    conn.execute(
        "CREATE INDEX IF NOT EXISTS idx_monitor_snapshots_event ON monitor_snapshots (event_id)"
    )


def _version_6(conn: sqlite3.Connection) -> None:
    """A large source state stored in parts, one row each (store/state_parts.py).

    Each change of a 100,000-file state rewrote it whole as one value; in parts, a
    change writes the parts it touched. A state stored in one row stays readable and is
    stored in parts by its next change. The triggers keep the parts from outliving
    their state: deleting the row (retention, a removed watch) drops them, and so does
    writing the state as one value again, by this or any other writer.
    """
    conn.execute(
        "CREATE TABLE IF NOT EXISTS monitor_state_parts ("
        " state_id TEXT NOT NULL, part TEXT NOT NULL, body TEXT NOT NULL,"
        " PRIMARY KEY (state_id, part)) WITHOUT ROWID"
    )
    conn.execute(
        "CREATE TRIGGER IF NOT EXISTS monitor_state_parts_follow_row"
        " AFTER DELETE ON monitor_state"
        " BEGIN DELETE FROM monitor_state_parts WHERE state_id = old.id; END"
    )
    conn.execute(
        "CREATE TRIGGER IF NOT EXISTS monitor_state_parts_follow_state"
        " AFTER UPDATE OF source_state ON monitor_state"
        f" WHEN old.source_state = '{PARTED}' AND new.source_state IS NOT '{PARTED}'"
        " BEGIN DELETE FROM monitor_state_parts WHERE state_id = old.id; END"
    )


def _version_7(conn: sqlite3.Connection) -> None:
    """A monitor's first baseline stored packed, many objects' texts a row
    (store/baseline_packs.py).

    One ``monitor_snapshots`` row per file of a 100,000-file baseline was most of a
    second of the first tick and 70 MB; packs of about 32 KB, keyed by the first object
    key each holds, are a tenth of the time and under half the size. Rows stay the
    store of every later snapshot; an object with no row of its own is read from its
    pack. Ids and times as in the other tables, so retention walks it the same way.
    """
    conn.execute(
        "CREATE TABLE IF NOT EXISTS monitor_baseline_packs ("
        " id TEXT PRIMARY KEY, workspace_path TEXT, monitor_id TEXT NOT NULL,"
        " first_key TEXT NOT NULL, body TEXT NOT NULL, created_at INTEGER NOT NULL)"
    )
    conn.execute(
        "CREATE INDEX IF NOT EXISTS idx_monitor_baseline_packs_key"
        " ON monitor_baseline_packs (monitor_id, workspace_path, first_key)"
    )
    conn.execute(
        "CREATE INDEX IF NOT EXISTS idx_monitor_baseline_packs_created"
        " ON monitor_baseline_packs (created_at, id)"
    )


def migrate(conn: sqlite3.Connection, new_id: Callable[[], str]) -> None:
    """Bring the schema to ``SCHEMA_VERSION``; the caller holds a write transaction."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        # A newer agentmonitors wrote this file; its additions are additive, so the
        # tables we know are still there. Refuse only if they are not.
        if not _table_exists(conn, "monitor_events"):
            raise RuntimeError(
                f"database schema version {version} is newer than this agentmonitors "
                f"understands ({SCHEMA_VERSION})"
            )
        return
    _compatible_schema(conn, new_id)
    if version < 1:
        _version_1(conn)
    if version < 2:
        _version_2(conn)
    if version < 3:
        _version_3(conn)
    if version < 4:
        _version_4(conn)
    if version < 5:
        _version_5(conn)
    if version < 6:
        _version_6(conn)
    if version < 7:
        _version_7(conn)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
