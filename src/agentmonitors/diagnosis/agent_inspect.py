"""``inspect``: a session's changes in three buckets, received, pending and armed.

- **received**: surfaced to the session (claimed) or acknowledged;
- **pending**: unread and deliverable at the session's next delivery point;
- **armed**: detected but held: by the monitor's notify pacing (debounce batch, rollup
  window, throttle), by a delivery hold (``monitor explain``'s diagnosis: high-urgency
  settle window, a reminder coalesced until acknowledgement, the context cap, an
  in-flight reservation), or by a recorded suppression (``net`` collapse, Interpret).
  Each entry names its hold and, when the time is known, the earliest it can fire.

Every event of a session is in exactly one bucket. Pure read: the same delivery holds
``hook deliver --debug`` and ``monitor explain`` report (``delivery/diagnose.py``), and
nothing is claimed, acknowledged or moved (docs/architecture.md, "The delivery protocol").
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from agentmonitors.clock import iso_from_ms, ms_from_iso
from agentmonitors.delivery.decide import SessionView, high_batch
from agentmonitors.delivery.diagnose import cap_hold, diagnose
from agentmonitors.delivery.records import HIGH_URGENCY_SETTLE_MS, DeliveryRow
from agentmonitors.diagnosis.agent_lookups import EPHEMERAL_PREFIX, require_session
from agentmonitors.diagnosis.holds import hold_phrase
from agentmonitors.monitor.cron import next_cron_fire_ms
from agentmonitors.monitor.discovery import discover
from agentmonitors.monitor.policy import RollupPolicy
from agentmonitors.runtime.notify import pending_count
from agentmonitors.store.records import iso_from_seconds, loads

MAX_LISTED = 20
"""Each bucket lists at most this many events (the counts are always complete)."""
MAX_RECEIVED = 10
"""Received events are history: only the newest few are listed."""

# How each lifecycle surfaced an event of each urgency (``delivery/decide.py``): a high
# event's block at a prompt, a reminder line for normal and low ones, a recap after a
# compaction. What a claim showed is decided there; this only names it.
_DELIVERED_AS = {"post-compact": "recap", "turn-idle": "reminder"}

# A monitor's rollup window and its time zone, when it has one (read from its file).
WindowOf = Callable[[str], tuple[str, str] | None]
_WHEN = {"low": "at the end of the next turn"}
_NEXT_PROMPT = "at the next prompt or tool call"


def inspect_report(
    conn: sqlite3.Connection,
    *,
    workspace: str | None,
    session_id: str | None,
    now_ms: int,
    leased: Callable[[str], frozenset[str]] | None = None,
    socket_path: str = "",
    window_of: WindowOf | None = None,
    limit: int | None = None,
    show_all: bool = False,
) -> dict[str, Any]:
    """The three buckets of one session, or of every active lead session of the workspace.

    ``leased`` gives a session's rows held by in-flight deliveries (only a daemon
    knows them); ``socket_path`` sizes a hook delivery the way the hook would.
    Each list holds at most ``limit`` items (by default :data:`MAX_RECEIVED` received
    and :data:`MAX_LISTED` others), every item with ``show_all``; each says how many
    it left out (``omitted``).
    """
    bounds = _Bounds(
        received=None if show_all else (limit or MAX_RECEIVED),
        listed=None if show_all else (limit or MAX_LISTED),
    )
    if session_id is not None:
        sessions = [require_session(conn, session_id)]
    else:
        sessions = conn.execute(
            "SELECT * FROM agent_sessions WHERE role = 'lead' AND status = 'active'"
            " AND workspace_path IS ? ORDER BY created_at, id",
            (workspace,),
        ).fetchall()
    reports = [
        _session_report(
            conn,
            row,
            workspace=workspace if workspace is not None else row["workspace_path"],
            now_ms=now_ms,
            leased=frozenset() if leased is None else leased(str(row["id"])),
            socket_path=socket_path,
            window_of=window_of,
            bounds=bounds,
        )
        for row in sessions
    ]
    return {"workspacePath": workspace, "generatedAt": iso_from_ms(now_ms), "sessions": reports}


class _Bounds:
    """How many items each list of the report keeps (None: all of them)."""

    __slots__ = ("listed", "received")

    def __init__(self, *, received: int | None, listed: int | None) -> None:
        self.received = received
        self.listed = listed


_ALL = _Bounds(received=None, listed=None)


def _cut(items: list[Any], bound: int | None) -> list[Any]:
    return items if bound is None else items[:bound]


def _event_json(row: DeliveryRow) -> dict[str, Any]:
    event = row.event
    return {
        "eventId": event.id,
        "monitorId": event.monitor_id,
        "objectKey": event.object_key or event.monitor_id,
        "urgency": event.urgency,
        "title": event.title,
        "createdAt": iso_from_seconds(event.created_at),
    }


def _session_report(
    conn: sqlite3.Connection,
    session: sqlite3.Row,
    *,
    workspace: str | None,
    now_ms: int,
    leased: frozenset[str],
    socket_path: str,
    window_of: WindowOf | None,
    bounds: _Bounds = _ALL,
) -> dict[str, Any]:
    session_id = str(session["id"])
    view = SessionView.read(conn, session_id, leased, now_ms)
    armed = _delivery_holds(conn, view, socket_path)
    held_ids = {event_id for entry in armed for event_id in entry.get("eventIds", ())}
    pending = [
        {**_event_json(row), "deliverAt": _WHEN.get(row.urgency, _NEXT_PROMPT)}
        for urgency in ("high", "normal", "low")
        for row in view.claimable(urgency)
        if row.id not in held_ids
    ]
    armed += _suppressions(conn, session_id)
    armed += _notify_holds(conn, session_id, workspace, now_ms, window_of)
    for entry in armed:
        _bound_entry(entry, bounds.listed)
    listed = _cut(pending, bounds.listed)
    return {
        "sessionId": session_id,
        "hostSessionId": session["host_session_id"],
        "status": session["status"],
        "received": _received(conn, session_id, bounds.received),
        "pending": {"count": len(pending), "omitted": len(pending) - len(listed), "events": listed},
        "armed": {"count": len(armed), "entries": armed},
    }


def _bound_entry(entry: dict[str, Any], bound: int | None) -> None:
    """Cut an armed entry's id or key list, saying how many it left out."""
    for field, omitted in (("eventIds", "omittedEventIds"), ("objectKeys", "omittedObjectKeys")):
        if field in entry:
            kept = _cut(entry[field], bound)
            entry[omitted] = len(entry[field]) - len(kept)
            entry[field] = kept


# --------------------------------------------------------------------------- delivery holds


def _entry(
    reason: str,
    rows: Iterable[DeliveryRow],
    earliest_ms: int | None,
    detail: str,
    **extra: Any,
) -> dict[str, Any]:
    listed = list(rows)
    monitors = sorted({row.event.monitor_id for row in listed})
    return {
        "reason": reason,
        "monitorIds": monitors,
        "eventIds": [row.id for row in listed],
        "eventCount": len(listed),
        "earliestFireAt": None if earliest_ms is None else iso_from_ms(earliest_ms),
        "detail": detail,
        **extra,
    }


def _delivery_holds(
    conn: sqlite3.Connection, view: SessionView, socket_path: str
) -> list[dict[str, Any]]:
    """The session's unread rows a delivery would hold now, from ``monitor explain``'s
    diagnosis, each hold with the rows it concerns."""
    now = view.now_ms
    unsettled = [row for row in view.claimable("high") if not row.settled(now)]
    deferred = cap_hold(conn, view, socket_path=socket_path) if view.claimable("high") else None
    holds = [
        *diagnose(view, "turn-interruptible", deferred=deferred)["holds"],
        *diagnose(view, "turn-idle")["holds"],
    ]
    entries: list[dict[str, Any]] = []
    settles = [row.event.created_at * 1000 + HIGH_URGENCY_SETTLE_MS for row in unsettled]
    if unsettled:
        # Held whether or not some other high row has settled: a claim takes settled rows
        # only. The diagnosis words it when nothing at all has settled yet.
        phrase = next(
            (
                hold_phrase(hold)
                for hold in holds
                if (hold["reason"], hold["urgency"]) == ("settle-window", "high")
            ),
            "high-urgency events settle 15s before delivery, so a burst arrives as one",
        )
        entries.append(_entry("settle-window", unsettled, min(settles), phrase))
    leased = [
        row
        for urgency in ("high", "normal", "low")
        for row in view.pending_band(urgency)
        if row.id in view.leased
    ]
    if leased:
        # Listed whatever else holds their band, so every row lands in one bucket.
        phrase = next(
            (hold_phrase(hold) for hold in holds if hold["reason"] == "reserved-in-flight"),
            "held: reserved-in-flight (a delivery is surfacing them right now; nothing to do)",
        )
        entries.append(_entry("reserved-in-flight", leased, None, phrase))
    for hold in holds:
        reason, urgency = hold["reason"], hold["urgency"]
        if reason == "settle-window" and urgency == "normal":
            rows = view.claimable("normal")
            entries.append(_entry(reason, rows, min(settles, default=None), hold_phrase(hold)))
        elif reason == "deferred-by-cap":
            entries.append(_entry(reason, _deferred(conn, view, hold), None, hold_phrase(hold)))
        elif reason == "coalesced-until-ack":
            entries.append(
                _entry(
                    reason,
                    view.claimable(urgency),
                    None,
                    hold_phrase(hold),
                    ackCommand=hold.get("ackCommand"),
                )
            )
    return entries


def _deferred(
    conn: sqlite3.Connection, view: SessionView, hold: Mapping[str, Any]
) -> list[DeliveryRow]:
    """The settled high rows the next prompt leaves behind: the groups past the cap, each
    with the older rows of its object that it stands for."""
    batch = high_batch(conn, view, None)
    shown = batch.shown if batch is not None else []
    left = shown[int(hold.get("deliverableCount", len(shown))) :]
    ids = {row.id for row in left}
    groups = {row.group for row in left if row.group is not None}
    return [row for row in view.settled_high() if row.id in ids or row.group in groups]


def _suppressions(conn: sqlite3.Connection, session_id: str) -> list[dict[str, Any]]:
    """Unacknowledged rows a recorded suppression holds: met, and deliberately not shown."""
    rows = conn.execute(
        "SELECT s.event_id, s.net_suppressed_at, s.interpret_reason, e.monitor_id"
        " FROM session_event_state s JOIN monitor_events e ON e.id = s.event_id"
        " WHERE s.session_id = ? AND s.acknowledged_at IS NULL AND (s.net_suppressed_at IS"
        " NOT NULL OR COALESCE(s.interpret_decision, '') = 'suppress')"
        " ORDER BY e.created_at, e.id",
        (session_id,),
    ).fetchall()
    net = [row for row in rows if row["net_suppressed_at"] is not None]
    interpreted = [row for row in rows if row["net_suppressed_at"] is None]
    entries = []
    for reason, found, detail in (
        (
            "net",
            net,
            "folded into a newer event of the same object, which was shown instead; they are"
            " acknowledged with it",
        ),
        ("interpret", interpreted, "judged not significant by the Interpret stage"),
    ):
        if found:
            entries.append(
                {
                    "reason": reason,
                    "monitorIds": sorted({str(row["monitor_id"]) for row in found}),
                    "eventIds": [str(row["event_id"]) for row in found],
                    "eventCount": len(found),
                    "earliestFireAt": None,
                    "detail": detail,
                }
            )
    return entries


# --------------------------------------------------------------------------- notify holds


def _notify_holds(
    conn: sqlite3.Connection,
    session_id: str,
    workspace: str | None,
    now_ms: int,
    window_of: WindowOf | None,
) -> list[dict[str, Any]]:
    """Observations a monitor's pacing holds before they become events.

    The session hears of the workspace's file monitors and of its own live ephemeral ones
    (a cancelled watch's held observations never fire).
    """
    rows = conn.execute(
        "SELECT monitor_id, notify_state FROM monitor_state WHERE workspace_path IS ?"
        " AND (monitor_id NOT LIKE ? OR monitor_id IN (SELECT id FROM ephemeral_monitors"
        " WHERE session_id = ? AND status = 'active')) ORDER BY monitor_id",
        (workspace, EPHEMERAL_PREFIX + "%", session_id),
    ).fetchall()
    entries: list[dict[str, Any]] = []
    for monitor_id, notify_text in rows:
        state = loads(notify_text, {})
        if isinstance(state, dict):
            entries += _monitor_holds(str(monitor_id), state, now_ms, window_of)
    return entries


def _held_objects(batch: Mapping[str, Any]) -> list[str]:
    keys: list[str] = []
    for envelope in batch.get("observations") or ():
        observation = envelope.get("observation") if isinstance(envelope, dict) else None
        key = observation.get("objectKey") if isinstance(observation, dict) else None
        if isinstance(key, str) and key not in keys:
            keys.append(key)
    return keys


def _monitor_holds(
    monitor_id: str, state: dict[str, Any], now_ms: int, window_of: WindowOf | None
) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    held = pending_count(state)
    debounce = state.get("pendingDebounce")
    if isinstance(debounce, dict) and held:
        due = ms_from_iso(str(debounce.get("dueAt", "")))
        detail = (
            "the debounce window has elapsed; they become events at the monitor's next tick"
            if due is None or due <= now_ms
            else "a debounce batch: more changes inside the window join it"
        )
        entries.append(_notify_entry("debounce", monitor_id, debounce, due, detail))
    rollup = state.get("pendingRollup")
    if isinstance(rollup, dict) and held:
        fires = _next_window(monitor_id, now_ms, window_of)
        entries.append(
            _notify_entry(
                "rollup",
                monitor_id,
                rollup,
                fires,
                "a rollup batch, released when its window opens",
            )
        )
    until = ms_from_iso(str(state.get("suppressedUntil", "")))
    if until is not None and until > now_ms:
        entries.append(
            _notify_entry(
                "throttle",
                monitor_id,
                {},
                until,
                "the throttle window is open: changes observed before then are dropped",
            )
        )
    return entries


def _notify_entry(
    reason: str, monitor_id: str, batch: Mapping[str, Any], earliest_ms: int | None, detail: str
) -> dict[str, Any]:
    observations = batch.get("observations")
    return {
        "reason": reason,
        "monitorIds": [monitor_id],
        "observations": len(observations) if isinstance(observations, list) else 0,
        "objectKeys": _held_objects(batch),
        "earliestFireAt": None if earliest_ms is None else iso_from_ms(earliest_ms),
        "detail": detail,
    }


def _next_window(monitor_id: str, now_ms: int, window_of: WindowOf | None) -> int | None:
    found = window_of(monitor_id) if window_of is not None else None
    if found is None:
        return None
    window, timezone = found
    try:
        # This minute's firing counts when it matches (as the tick evaluates it).
        return next_cron_fire_ms(window, timezone, now_ms - now_ms % 60_000 - 1)
    except ValueError:
        return None


# --------------------------------------------------------------------------- received


def _delivered_as(lifecycle: str | None, urgency: str) -> str | None:
    if lifecycle is None:
        return None  # acknowledged without ever being delivered
    if lifecycle == "turn-interruptible":
        return "event" if urgency == "high" else "reminder"
    return _DELIVERED_AS.get(lifecycle, lifecycle)


def _received(conn: sqlite3.Connection, session_id: str, bound: int | None) -> dict[str, Any]:
    """Claimed or acknowledged rows: counts, and the newest ``bound`` (all for None)."""
    visible = (
        " FROM session_event_state s JOIN monitor_events e ON e.id = s.event_id"
        " WHERE s.session_id = ? AND (s.acknowledged_at IS NOT NULL OR"
        " (s.first_notified_at IS NOT NULL AND s.net_suppressed_at IS NULL"
        " AND COALESCE(s.interpret_decision, '') != 'suppress'))"
    )
    claimed, acknowledged = conn.execute(
        "SELECT COALESCE(SUM(s.acknowledged_at IS NULL), 0),"
        " COALESCE(SUM(s.acknowledged_at IS NOT NULL), 0)" + visible,
        (session_id,),
    ).fetchone()
    newest = conn.execute(
        "SELECT e.id, e.monitor_id, e.object_key, e.urgency, e.title, e.created_at,"
        " s.first_notified_at, s.acknowledged_at, s.last_claim_lifecycle"
        + visible
        + " ORDER BY COALESCE(s.acknowledged_at, s.first_notified_at) DESC, e.id DESC LIMIT ?",
        (session_id, -1 if bound is None else bound),
    ).fetchall()
    events = [
        {
            "eventId": row[0],
            "monitorId": row[1],
            "objectKey": row[2] or row[1],
            "urgency": row[3],
            "title": row[4],
            "createdAt": iso_from_seconds(row[5]),
            "state": "claimed" if row[7] is None else "acknowledged",
            "at": iso_from_seconds(row[7] if row[7] is not None else row[6]),
            # The delivery point that surfaced it last (None: acknowledged unseen).
            "lifecycle": row[8] if row[6] is not None else None,
            "deliveredAs": _delivered_as(row[8] if row[6] is not None else None, str(row[3])),
        }
        for row in newest
    ]
    total = int(claimed) + int(acknowledged)
    return {
        "count": total,
        "claimed": int(claimed),
        "acknowledged": int(acknowledged),
        "omitted": total - len(events),
        "events": events,
    }


def rollup_windows(workspace: str) -> WindowOf:
    """The rollup windows of the workspace's monitor files, read once when first asked."""
    found: dict[str, tuple[str, str]] = {}
    loaded = False

    def window_of(monitor_id: str) -> tuple[str, str] | None:
        nonlocal loaded
        if not loaded:
            loaded = True
            for monitor in discover(workspace).monitors:
                notify = monitor.frontmatter.notify
                if isinstance(notify, RollupPolicy):
                    found[monitor.id] = (str(notify.window), notify.timezone or "UTC")
        return found.get(monitor_id)

    return window_of
