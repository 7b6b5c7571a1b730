"""The stored rows a monitor's liveness is read from (docs/architecture.md, "Liveness").

A liveness event (a monitor gone silent, failing, recovered) is an ordinary event row
under an object key of its own, which no source makes, so it never collapses into, nor
is diffed against, a real change of an object. Everything the runtime needs to know
about liveness after a restart is read back from these rows and the history: nothing
is kept anywhere else.
"""

from __future__ import annotations

import json
import sqlite3

# The object keys of liveness events: a source's keys are paths, URLs, crons and refs.
SILENCE_KEY = "agentmonitors:silence"
HEALTH_KEY = "agentmonitors:health"
LIVENESS_KEYS = (SILENCE_KEY, HEALTH_KEY)
# ``query_scope["liveness"]`` of each kind of liveness event.
SILENT, FAILING, RECOVERED = "silent", "failing", "recovered"


def last_change(
    conn: sqlite3.Connection, monitor_id: str, workspace: str | None
) -> tuple[int, str] | None:
    """(created_at s, id) of the monitor's newest event that is a real change."""
    row = conn.execute(
        "SELECT created_at, id FROM monitor_events WHERE monitor_id = ? AND workspace_path IS ?"
        " AND (object_key IS NULL OR object_key NOT IN (?, ?))"
        " ORDER BY created_at DESC, id DESC LIMIT 1",
        (monitor_id, workspace, *LIVENESS_KEYS),
    ).fetchone()
    return None if row is None else (int(row[0]), str(row[1]))


def last_silence(
    conn: sqlite3.Connection, monitor_id: str, workspace: str | None
) -> tuple[int, str] | None:
    """(created_at s, id) of the monitor's newest silence event."""
    row = conn.execute(
        "SELECT created_at, id FROM monitor_events WHERE monitor_id = ? AND object_key = ?"
        " AND workspace_path IS ? ORDER BY created_at DESC, id DESC LIMIT 1",
        (monitor_id, SILENCE_KEY, workspace),
    ).fetchone()
    return None if row is None else (int(row[0]), str(row[1]))


def last_health(conn: sqlite3.Connection, monitor_id: str, workspace: str | None) -> str | None:
    """The kind (``failing``, ``recovered``) of the monitor's newest health event."""
    row = conn.execute(
        "SELECT query_scope FROM monitor_events WHERE monitor_id = ? AND object_key = ?"
        " AND workspace_path IS ? ORDER BY created_at DESC, id DESC LIMIT 1",
        (monitor_id, HEALTH_KEY, workspace),
    ).fetchone()
    if row is None:
        return None
    try:
        kind = json.loads(row[0]).get("liveness")
    except (ValueError, AttributeError):
        return None
    return kind if isinstance(kind, str) else None


def first_observation(
    conn: sqlite3.Connection, monitor_id: str, workspace: str | None
) -> int | None:
    """When (s) the monitor was first observed without failing: its baseline."""
    # In index order, stopping at the first: a monitor that never changed may have
    # months of history, and MIN() with the result filter would read all of it.
    row = conn.execute(
        "SELECT created_at FROM observation_history WHERE monitor_id = ?"
        " AND workspace_path IS ? AND result != 'errored' ORDER BY created_at LIMIT 1",
        (monitor_id, workspace),
    ).fetchone()
    return None if row is None else int(row[0])


def errored_run(
    conn: sqlite3.Connection, monitor_id: str, workspace: str | None, *, skip: int = 0
) -> int:
    """How many of the monitor's newest history rows, below the ``skip`` newest, are
    ``errored``, in a row."""
    rows = conn.execute(
        "SELECT result FROM observation_history WHERE monitor_id = ? AND workspace_path IS ?"
        " ORDER BY created_at DESC, id DESC LIMIT -1 OFFSET ?",
        (monitor_id, workspace, skip),
    )
    count = 0
    for (result,) in rows:
        if result != "errored":
            break
        count += 1
    return count
