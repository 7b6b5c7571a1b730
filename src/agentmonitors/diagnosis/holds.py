"""Per session: the hold on a monitor's unread events right now, and who is listening.

The holds are ``hook.diagnose``'s (``delivery/diagnose.py``), so ``monitor explain``
and ``hook deliver --debug`` give one answer; the listeners are the transport
heartbeats (``delivery/heartbeats.py``, its one staleness rule). Nothing here writes.
"""

from __future__ import annotations

import math
import sqlite3
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from agentmonitors.delivery.decide import SessionView
from agentmonitors.delivery.diagnose import ack_command, cap_hold, diagnose
from agentmonitors.delivery.heartbeats import is_stale
from agentmonitors.delivery.records import check_lifecycle
from agentmonitors.delivery.transports.registry import transports
from agentmonitors.fastpath.lean_dataclass import dataclass

# The lifecycle at which each band is delivered (hooks: prompt or tool call; turn end).
_LIFECYCLE = {"high": "turn-interruptible", "normal": "turn-interruptible", "low": "turn-idle"}
_WHEN = {
    "turn-interruptible": "at the next prompt or tool call",
    "turn-idle": "at the end of the next turn",
}


@dataclass(frozen=True)
class DeliveryProbe:
    """What the delivery stage reads besides the database.

    ``leases`` gives a session's rows leased by in-flight deliveries (only a daemon
    knows: leases live in its memory); ``socket_path`` sizes a hook delivery the way
    the hook would; ``wall_ms`` is the time heartbeats are judged at (their writers
    stamp wall-clock time, whatever clock the report otherwise runs on).
    """

    leases: Callable[[str], frozenset[str]] | None = None
    socket_path: str = ""
    wall_ms: int | None = None

    def leased(self, session_id: str) -> frozenset[str]:
        return frozenset() if self.leases is None else self.leases(session_id)

    def wall_now_ms(self) -> int:
        return self.wall_ms if self.wall_ms is not None else time.time_ns() // 1_000_000


def session_holds(
    conn: sqlite3.Connection,
    session_id: str,
    monitor_id: str,
    now_ms: int,
    probe: DeliveryProbe,
) -> dict[str, Any]:
    """The session's holds on ``monitor_id``'s unread events, and a one-line verdict.

    A hold is reported when it concerns a band this monitor has unread rows in: the
    diagnosis is session-wide (one monitor's claimed reminder mutes another's).
    """
    view = SessionView.read(conn, session_id, probe.leased(session_id), now_ms)
    mine = [row for row in view.unread if row.event.monitor_id == monitor_id]
    # A claimed high row was shown in full: high holds (settling, capped, leased) concern
    # only pending ones. A claimed reminder row is what mutes its band's reminder.
    bands = {row.urgency for row in mine if row.urgency != "high" or row.first_notified_at is None}
    holds: list[dict[str, Any]] = []
    lifecycles = sorted({_LIFECYCLE.get(band, "turn-interruptible") for band in bands})
    for lifecycle in lifecycles:
        deferred = None
        if lifecycle == "turn-interruptible" and "high" in bands:
            deferred = cap_hold(conn, view, socket_path=probe.socket_path)
        report = diagnose(view, check_lifecycle(lifecycle), deferred=deferred)
        holds += [
            {**hold, "lifecycle": lifecycle} for hold in report["holds"] if hold["urgency"] in bands
        ]
    pending = [row for row in mine if row.first_notified_at is None]
    leased = [row for row in pending if row.id in view.leased]
    claimed = [row.id for row in mine if row.first_notified_at is not None]
    status: dict[str, Any] = {
        # The lifecycle that delivers this monitor's band (each hold names its own).
        "lifecycle": lifecycles[0] if lifecycles else None,
        "monitorUnread": len(mine),
        "monitorPending": len(pending) - len(leased),
        "monitorClaimed": len(claimed),
        "monitorLeased": len(leased),
        "holds": holds,
        "hold": holds[0]["reason"] if holds else None,
    }
    status["state"] = _state_phrase(session_id, status, claimed)
    return status


def _state_phrase(session_id: str, status: Mapping[str, Any], claimed: list[str]) -> str:
    holds = status["holds"]
    if holds:
        return "; ".join(hold_phrase(hold) for hold in holds)
    if status["monitorPending"] > 0:
        return f"deliverable {_WHEN.get(str(status['lifecycle']), 'at the next hook')}"
    if claimed:
        return (
            f"delivered, waiting for acknowledgement (`{ack_command(session_id, claimed)}`"
            " once handled)"
        )
    return "nothing unread"


def hold_phrase(hold: Mapping[str, Any]) -> str:
    """``held: <reason> (<what it means, what to do>)`` for one hold."""
    reason = hold["reason"]
    if reason == "settle-window" and hold["urgency"] == "high":
        seconds = math.ceil(int(hold.get("settleRemainingMs", 0)) / 1000)
        detail = f"high-urgency events settle 15s before delivery; about {seconds}s left"
    elif reason == "settle-window":
        detail = "the reminder rides along with the high-urgency delivery once that settles"
    elif reason in ("already-claimed", "coalesced-until-ack"):
        detail = (
            "a reminder already surfaced; no new one until acknowledged:"
            f" `{hold.get('ackCommand', '')}`"
        )
    elif reason == "reserved-in-flight":
        detail = "a delivery is surfacing them right now; nothing to do"
    elif reason == "deferred-by-cap":
        detail = (
            f"{hold.get('deferredCount')} settled high-urgency event(s) did not fit the context"
            " cap; they surface at the following prompts"
        )
    else:
        detail = str(hold.get("message", ""))
    return f"held: {reason} ({detail})"


def listeners(
    records: Iterable[Mapping[str, Any]],
    session_id: str,
    host_session_id: str | None,
    wall_ms: int,
) -> dict[str, Any]:
    """Per transport, the freshest heartbeat of this session (None when there is none)."""
    found: dict[str, Any] = dict.fromkeys(transport.name for transport in transports())
    for record in records:
        transport = record.get("transport")
        if transport not in found:
            continue
        ours = record.get("sessionId") == session_id or (
            host_session_id is not None and record.get("hostSessionId") == host_session_id
        )
        if not ours:
            continue
        entry: dict[str, Any] = {
            "listening": not is_stale(dict(record), wall_ms),
            "updatedAt": record.get("updatedAt"),
        }
        if record.get("lastDeliveryAt") is not None:
            entry["lastDeliveryAt"] = record.get("lastDeliveryAt")
        previous = found[transport]
        if previous is None or _newer(entry, previous):
            found[transport] = entry
    return found


def _newer(entry: Mapping[str, Any], previous: Mapping[str, Any]) -> bool:
    if entry["listening"] != previous["listening"]:
        return bool(entry["listening"])
    return str(entry.get("updatedAt") or "") > str(previous.get("updatedAt") or "")


def listener_phrase(found: Mapping[str, Any]) -> str:
    """``hook listening, no channel``-style summary of :func:`listeners`."""
    parts = []
    for kind in transports():
        transport = kind.name
        entry = found.get(transport)
        if entry is None:
            if kind.named_when_absent:
                parts.append(f"no {transport}")
        elif entry["listening"]:
            parts.append(f"{transport} listening (seen {entry['updatedAt']})")
        else:
            parts.append(f"{transport} silent since {entry['updatedAt']}")
    return ", ".join(parts)
