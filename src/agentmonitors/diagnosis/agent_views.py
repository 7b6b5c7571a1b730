"""The agent's read-only follow-up verbs: ``snapshot``, ``diff`` and ``summary``.

An agent told that something changed asks about one object without re-observing it:
everything here reads what the daemon already stored (snapshots, events, the
session's projections and cursors) and never writes, claims, acknowledges or moves a
cursor (docs/architecture.md, "The life of one event"). Answers are bounded so they
fit an agent's context. Errors are :class:`AgentViewError` with a message naming the
monitor, object, point or session at fault.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from agentmonitors.diagnosis.agent_lookups import (
    AgentViewError,
    FileMonitorCheck,
    Scope,
    check_monitor,
    diff_strategy,
    latest_snapshot,
    pick_object,
    resolve_point,
    snapshot_before,
)
from agentmonitors.diagnosis.object_keys import (
    MAX_LISTED_KEYS,
    event_object_keys,
    key_listing,
    resolve_object_key,
)
from agentmonitors.diff import JSON_DIFF_STRATEGY, build_diff
from agentmonitors.store.records import iso_from_seconds, loads

MAX_SNAPSHOT_CHARS = 16_000
"""A snapshot longer than this is cut (the answer says so and gives the full length)."""
MAX_SUMMARY_OBJECTS = 20
"""``summary`` without ``--object`` covers at most this many objects (newest first)."""


# --------------------------------------------------------------------------- snapshot


def snapshot_view(
    conn: sqlite3.Connection,
    scope: Scope,
    monitor_id: str,
    object_key: str | None,
    is_file_monitor: FileMonitorCheck,
    *,
    offset: int = 0,
) -> dict[str, Any]:
    """The latest stored snapshot of one object, or the object keys when ambiguous.

    An ambiguous answer carries ``objectKeys`` and no ``content``; the caller reports
    it as an error (the verb never guesses which object was meant). At most
    :data:`MAX_SNAPSHOT_CHARS` characters are shown, from ``offset`` on; the answer says
    how many are left and the offset that shows the next part.
    """
    check_monitor(conn, scope, monitor_id, is_file_monitor)
    picked = pick_object(conn, scope, monitor_id, object_key)
    if isinstance(picked, list):
        return _ambiguous(monitor_id, picked)
    point = latest_snapshot(conn, scope, monitor_id, picked)
    assert point is not None  # the key was listed from stored snapshots
    content = point.content
    if offset > len(content):
        raise AgentViewError(
            f"--offset {offset} is past the end of the snapshot of {picked!r}"
            f" ({len(content)} characters)."
        )
    shown = content[offset : offset + MAX_SNAPSHOT_CHARS]
    end = offset + len(shown)
    result: dict[str, Any] = {
        "monitorId": monitor_id,
        "objectKey": picked,
        "eventId": point.event_id or None,
        "baseline": not point.event_id,
        "capturedAt": iso_from_seconds(point.created_at),
        "contentChars": len(content),
        "truncated": len(shown) < len(content),
        "content": shown,
        "offset": offset,
        "remainingChars": len(content) - end,
        "nextOffset": end if end < len(content) else None,
    }
    return result


def _ambiguous(monitor_id: str, keys: list[str]) -> dict[str, Any]:
    shown = keys[:MAX_LISTED_KEYS]
    return {
        "monitorId": monitor_id,
        "error": (
            f"Monitor {monitor_id} watches {len(keys)} objects; pass --object with one of"
            " the keys listed."
        ),
        "objectKeys": shown,
        "moreObjectKeys": len(keys) - len(shown),
    }


# --------------------------------------------------------------------------- diff


def diff_view(
    conn: sqlite3.Connection,
    scope: Scope,
    monitor_id: str,
    object_key: str,
    is_file_monitor: FileMonitorCheck,
    *,
    from_point: str | None = None,
    to_point: str | None = None,
    whole: bool = False,
) -> dict[str, Any]:
    """The diff of one object between two stored points, as delivery computes it
    (bounded as deliveries are, unless ``whole``).

    ``--to`` defaults to the latest snapshot; ``--from`` to the asking session's cursor
    (what it last saw: shown or acknowledged), or, with no session, to the snapshot before ``--to``.
    """
    check_monitor(conn, scope, monitor_id, is_file_monitor)
    key = pick_object(conn, scope, monitor_id, object_key)
    assert isinstance(key, str)  # a named object is never ambiguous
    if to_point is None:
        to = latest_snapshot(conn, scope, monitor_id, key)
        assert to is not None
        to_json = to.to_json("latest", None)
    else:
        to = resolve_point(conn, scope, monitor_id, key, "--to", to_point)
        to_json = to.to_json("event" if to.event_id == to_point else "time", to_point)
    if from_point is not None:
        start = resolve_point(conn, scope, monitor_id, key, "--from", from_point)
        from_json = start.to_json("event" if start.event_id == from_point else "time", from_point)
        baseline = start.content
    elif scope.session_id is not None:
        baseline, from_json = _session_baseline(conn, scope, monitor_id, key)
    else:
        previous = snapshot_before(conn, scope, monitor_id, key, to)
        if previous is None and not to.event_id and to_point is None:
            raise AgentViewError(
                f'"{key}" has not changed since {monitor_id} first saw it: only its baseline'
                f" ({iso_from_seconds(to.created_at)}) is stored; `agentmonitors snapshot`"
                " shows it."
            )
        if previous is None:
            raise AgentViewError(
                f'"{key}" has no stored snapshot before {iso_from_seconds(to.created_at)}'
                f" (event {to.event_id}): pass --session to diff from what that session last"
                " saw, or --from."
            )
        from_json = previous.to_json("previous", None)
        baseline = previous.content
    strategy = diff_strategy(conn, to.event_id)
    diff = build_diff(baseline, to.content, strategy, whole=whole)
    return {
        "monitorId": monitor_id,
        "objectKey": key,
        "from": from_json,
        "to": to_json,
        "strategy": JSON_DIFF_STRATEGY if strategy == JSON_DIFF_STRATEGY else "text",
        "changed": bool(diff),
        "diff": diff,
        "whole": whole,
    }


def _session_baseline(
    conn: sqlite3.Connection, scope: Scope, monitor_id: str, key: str
) -> tuple[str, dict[str, Any]]:
    cursor = conn.execute(
        "SELECT baseline_snapshot_id, baseline_content, updated_at FROM session_object_cursor"
        " WHERE session_id = ? AND monitor_id = ? AND object_key = ?"
        " AND COALESCE(workspace_path, '') = COALESCE(?, '')",
        (scope.session_id, monitor_id, key, scope.workspace),
    ).fetchone()
    if cursor is None:
        raise AgentViewError(
            f'Session {scope.session_id} has seen no version of "{key}" of {monitor_id} (it'
            " was never shown or told of a change of it with a stored version before it):"
            " pass --from with an event id or an ISO-8601 time."
        )
    return str(cursor[1]), {
        "kind": "session-baseline",
        "point": None,
        "eventId": cursor[0],
        "capturedAt": iso_from_seconds(cursor[2]),
    }


# --------------------------------------------------------------------------- summary


def summary_view(
    conn: sqlite3.Connection,
    scope: Scope,
    monitor_id: str,
    object_key: str | None,
    is_file_monitor: FileMonitorCheck,
    *,
    limit: int = MAX_SUMMARY_OBJECTS,
    show_all: bool = False,
) -> dict[str, Any]:
    """Cheap orientation per object: the latest event's facets and the session's counts.

    No snapshot text and no diff: those are what ``snapshot`` and ``diff`` are for.
    At most ``limit`` objects, newest first (every one with ``show_all``); ``moreObjects``
    counts the rest.
    """
    check_monitor(conn, scope, monitor_id, is_file_monitor)
    where = " WHERE e.monitor_id = ? AND e.workspace_path IS ?"
    params: list[Any] = [monitor_id, scope.workspace]
    if object_key is not None:
        keys = event_object_keys(conn, monitor_id, scope.workspace)
        found = resolve_object_key(object_key, keys, workspace=scope.workspace, cwd=scope.cwd)
        if found is None:
            raise AgentViewError(
                f'Monitor {monitor_id} has no stored event of object "{object_key}"'
                f" (objects with events: {key_listing(keys, monitor_id)})."
            )
        where += " AND COALESCE(e.object_key, e.monitor_id) = ?"
        params.append(found)
    session = scope.session_id
    counts = (
        ", SUM(s.event_id IS NOT NULL AND s.acknowledged_at IS NULL"
        " AND s.first_notified_at IS NULL AND s.net_suppressed_at IS NULL"
        " AND COALESCE(s.interpret_decision, '') != 'suppress') AS unread,"
        " SUM(s.first_notified_at IS NOT NULL AND s.acknowledged_at IS NULL) AS claimed"
        if session is not None
        else ", NULL AS unread, NULL AS claimed"
    )
    join = (
        " LEFT JOIN session_event_state s ON s.event_id = e.id AND s.session_id = ?"
        if session is not None
        else ""
    )
    sql = (
        "SELECT COALESCE(e.object_key, e.monitor_id) AS object, COUNT(*) AS total,"
        f" MAX(e.created_at) AS at{counts} FROM monitor_events e{join}{where}"
        " GROUP BY object ORDER BY at DESC, object"
    )
    rows = conn.execute(sql, ([session] if session is not None else []) + params).fetchall()
    listed = rows if show_all else rows[:limit]
    objects = [_object_summary(conn, scope, monitor_id, row) for row in listed]
    return {
        "monitorId": monitor_id,
        "sessionId": session,
        "objectCount": len(rows),
        "moreObjects": len(rows) - len(listed),
        "objects": objects,
    }


def _object_summary(
    conn: sqlite3.Connection, scope: Scope, monitor_id: str, row: sqlite3.Row
) -> dict[str, Any]:
    key = str(row["object"])
    latest = conn.execute(
        "SELECT id, urgency, title, summary, query_scope, created_at FROM monitor_events"
        " WHERE monitor_id = ? AND workspace_path IS ? AND COALESCE(object_key, monitor_id) = ?"
        " ORDER BY created_at DESC, id DESC LIMIT 1",
        (monitor_id, scope.workspace, key),
    ).fetchone()
    query_scope = loads(latest["query_scope"], {})
    change_kind = query_scope.get("changeKind") if isinstance(query_scope, dict) else None
    return {
        "objectKey": key,
        "urgency": latest["urgency"],
        "changeKind": change_kind,
        "title": latest["title"],
        "summary": latest["summary"],
        "latestEventId": latest["id"],
        "latestAt": iso_from_seconds(latest["created_at"]),
        "events": int(row["total"]),
        "unread": None if row["unread"] is None else int(row["unread"]),
        "claimed": None if row["claimed"] is None else int(row["claimed"]),
    }
