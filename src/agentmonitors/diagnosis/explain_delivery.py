"""The delivery stage of ``monitor explain``: which sessions hold this monitor's events."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import Any

from agentmonitors.clock import ms_from_iso
from agentmonitors.delivery.heartbeats import read_records
from agentmonitors.delivery.records import session_json
from agentmonitors.delivery.wire import SessionRecord
from agentmonitors.diagnosis.explain_common import (
    SESSION_HINT,
    _Context,
    _plural,
    _stage,
)
from agentmonitors.diagnosis.holds import (
    DeliveryProbe,
    hold_phrase,
    listener_phrase,
    listeners,
    session_holds,
)
from agentmonitors.fastpath.lean_dataclass import dataclass
from agentmonitors.store.records import iso_from_seconds

# --------------------------------------------------------------------------- delivery


def _delivery_state(row: sqlite3.Row) -> str:
    if row["acknowledged_at"] is not None:
        return "acknowledged"
    if row["first_notified_at"] is not None:
        return "claimed"
    return "unread"


def _projection_json(row: sqlite3.Row) -> dict[str, Any]:
    projection: dict[str, Any] = {
        "eventId": row["event_id"],
        "sessionId": row["session_id"],
        "sessionRole": row["session_role"],
        "sessionStatus": row["session_status"],
        "deliveryState": _delivery_state(row),
        "workspacePath": row["session_workspace"],
        "createdAt": iso_from_seconds(row["created_at"]),
    }
    optional = {
        "firstNotifiedAt": iso_from_seconds(row["first_notified_at"]),
        "lastClaimAt": iso_from_seconds(row["last_claim_at"]),
        "lastClaimLifecycle": row["last_claim_lifecycle"],
        "acknowledgedAt": iso_from_seconds(row["acknowledged_at"]),
        "interpretDecision": row["interpret_decision"],
        "interpretReason": row["interpret_reason"],
        "interpretDigest": row["interpret_digest"],
        "diffText": row["diff_text"] if row["diff_text"] is not None else row["event_diff"],
    }
    projection.update({key: value for key, value in optional.items() if value is not None})
    if row["net_suppressed_at"] is not None:
        projection["netSuppressed"] = True
    return projection


_PROJECTION_JOIN = (
    " FROM session_event_state s"
    " JOIN monitor_events e ON e.id = s.event_id"
    " JOIN agent_sessions a ON a.id = s.session_id"
    " WHERE e.monitor_id = ? AND (e.workspace_path = ? OR e.workspace_path IS NULL)"
    " AND (a.workspace_path = ? OR a.workspace_path IS NULL)"
)


@dataclass(frozen=True)
class _Delivery:
    lead_sessions: list[SessionRecord]
    projections: list[dict[str, Any]]
    # Per session: acknowledged > suppressed > claimed > unread, each row counted once.
    counts: dict[str, dict[str, int]]
    interpret_suppressed: int


def _read_delivery(ctx: _Context) -> _Delivery:
    params = (ctx.monitor_id, ctx.workspace, ctx.workspace)
    with ctx.db.read() as conn:
        sessions = conn.execute(
            "SELECT * FROM agent_sessions WHERE role = 'lead'"
            " AND (workspace_path = ? OR workspace_path IS NULL) ORDER BY created_at, id",
            (ctx.workspace,),
        ).fetchall()
        tallies = conn.execute(
            "SELECT s.session_id,"
            " SUM(s.acknowledged_at IS NOT NULL),"
            " SUM(s.acknowledged_at IS NULL AND s.net_suppressed_at IS NOT NULL),"
            " SUM(s.acknowledged_at IS NULL AND s.net_suppressed_at IS NULL"
            "     AND s.first_notified_at IS NOT NULL),"
            " SUM(s.acknowledged_at IS NULL AND s.net_suppressed_at IS NULL"
            "     AND s.first_notified_at IS NULL),"
            " SUM(COALESCE(s.interpret_decision, '') = 'suppress')"
            + _PROJECTION_JOIN
            + " GROUP BY s.session_id ORDER BY MIN(a.created_at), s.session_id",
            params,
        ).fetchall()
        event_ids = [event.id for event in ctx.events]
        rows: list[sqlite3.Row] = []
        if event_ids:
            marks = ", ".join("?" for _ in event_ids)
            rows = conn.execute(
                "SELECT s.*, a.role AS session_role, a.status AS session_status,"
                " a.workspace_path AS session_workspace, e.diff_text AS event_diff"
                + _PROJECTION_JOIN
                + f" AND s.event_id IN ({marks})"
                " ORDER BY e.created_at DESC, e.id DESC, a.created_at, a.id",
                (*params, *event_ids),
            ).fetchall()
    counts: dict[str, dict[str, int]] = {}
    suppressed_by_interpret = 0
    for session_id, acknowledged, suppressed, claimed, unread, interpret in tallies:
        counts[str(session_id)] = {
            "unread": int(unread or 0),
            "claimed": int(claimed or 0),
            "acknowledged": int(acknowledged or 0),
            "suppressed": int(suppressed or 0),
        }
        suppressed_by_interpret += int(interpret or 0)
    return _Delivery(
        lead_sessions=[session_json(row) for row in sessions],
        projections=[_projection_json(row) for row in rows],
        counts=counts,
        interpret_suppressed=suppressed_by_interpret,
    )


def _session_summary(session_id: str, counts: Mapping[str, int]) -> str:
    parts = [f"{key} {counts[key]}" for key in ("unread", "claimed", "acknowledged")]
    if counts["suppressed"]:
        parts.append(f"suppressed {counts['suppressed']}")
    return f"{session_id}: {', '.join(parts)}"


def _session_entries(
    ctx: _Context, delivery: _Delivery, probe: DeliveryProbe
) -> list[dict[str, Any]]:
    """Per projected session: its counts, the hold on this monitor's events, its listeners."""
    hosts = {session["id"]: session.get("hostSessionId") for session in delivery.lead_sessions}
    records = read_records()
    wall_ms = probe.wall_now_ms()
    entries: list[dict[str, Any]] = []
    with ctx.db.read() as conn:
        for session_id, counts in delivery.counts.items():
            status = session_holds(conn, session_id, ctx.monitor_id, ctx.now_ms, probe)
            heard = listeners(records, session_id, hosts.get(session_id), wall_ms)
            line = (
                f"{_session_summary(session_id, counts)} - {status['state']}; "
                f"{listener_phrase(heard)}"
            )
            entries.append(
                {"sessionId": session_id, **counts, **status, "listeners": heard, "line": line}
            )
    return entries


def _suppression_findings(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every hold, flattened with its session: the report's ``reminderSuppression``."""
    return [
        {"sessionId": entry["sessionId"], **hold, "summary": hold_phrase(hold)}
        for entry in entries
        for hold in entry["holds"]
    ]


def _delivery(
    ctx: _Context,
    delivery: _Delivery,
    materialization: str,
    probe: DeliveryProbe | None = None,
) -> dict[str, Any]:
    sessions = delivery.lead_sessions
    session_ids = [session["id"] for session in sessions]
    details: dict[str, Any] = {"leadSessions": session_ids}
    no_session = f"No lead session is registered for this workspace; {SESSION_HINT}."
    latest_event = ctx.latest_event
    if latest_event is None:
        if materialization == "healthy":
            return _stage(
                "delivery",
                "healthy",
                "Nothing to deliver — no event was stored, as expected (not a bug).",
                details,
            )
        reason = "Nothing to deliver yet: no event has been stored for this monitor."
        if not sessions:
            reason += f" {no_session}"
        return _stage("delivery", "pending", reason, details)
    if not sessions:
        return _stage(
            "delivery",
            "pending",
            f"{no_session} A session receives only the events stored after it registered.",
            details,
        )
    if not delivery.counts:
        return _undelivered(sessions, latest_event.created_at, details)
    totals = {
        key: sum(counts[key] for counts in delivery.counts.values())
        for key in ("unread", "claimed", "acknowledged", "suppressed")
    }
    details.update(totals)
    details["sessions"] = _session_entries(ctx, delivery, probe or DeliveryProbe())
    details["reminderSuppression"] = _suppression_findings(details["sessions"])
    summaries = "; ".join(
        _session_summary(session_id, counts) for session_id, counts in delivery.counts.items()
    )
    reason = f"Events reached {_plural(len(delivery.counts), 'session')} ({summaries})."
    if delivery.interpret_suppressed:
        details["interpretSuppressed"] = delivery.interpret_suppressed
        reason += (
            f" Interpret suppressed {delivery.interpret_suppressed} as not substantive "
            "(decided per session)."
        )
    return _stage("delivery", "ok", reason, details)


def _undelivered(
    sessions: list[SessionRecord], event_created_s: int, details: dict[str, Any]
) -> dict[str, Any]:
    """The stage when sessions exist but none received this monitor's events."""
    at = iso_from_seconds(event_created_s)
    registered_ms = min(int(ms_from_iso(session["createdAt"]) or 0) for session in sessions)
    # Both times are whole seconds: a session registered in the event's second may have
    # come just after it (a session start racing the first check of another's daemon).
    if event_created_s * 1000 <= registered_ms:
        return _stage(
            "delivery",
            "pending",
            f"Every lead session registered after the latest event (stored at {at}): a "
            "session receives only the events stored after it registered, so they get this "
            "monitor's next event.",
            details,
        )
    return _stage(
        "delivery",
        "failure",
        f"None of the {_plural(len(sessions), 'registered session')} received this monitor's "
        f"latest event (stored at {at}), although they were registered before it. Restart "
        "the daemon (`agentmonitors daemon stop`; the next session start starts it again) "
        "and, if it happens again, report it with the output of "
        "`agentmonitors doctor --format json`.",
        details,
    )
