"""Why a claim at a lifecycle would (not) surface something: read-only hold diagnosis."""

from __future__ import annotations

import math
import sqlite3
from typing import Any

from agentmonitors.delivery.decide import SessionView, high_batch
from agentmonitors.delivery.layout import max_events
from agentmonitors.delivery.packing import HOOK_PACKING
from agentmonitors.delivery.records import HIGH_URGENCY_SETTLE_MS, Lifecycle
from agentmonitors.delivery.text import MAX_ADDITIONAL_CONTEXT
from agentmonitors.delivery.vocabulary import REMINDER

_LABEL = {"normal": "Normal", "low": "Low"}
_REMINDER_LIFECYCLE = {"normal": "turn-interruptible", "low": "turn-idle"}


def settle_hold(view: SessionView) -> dict[str, Any] | None:
    """High rows are pending but none has finished its settle window."""
    pending = view.claimable("high")
    if not pending or any(row.settled(view.now_ms) for row in pending):
        return None
    oldest_age = max(view.now_ms - row.event.created_at * 1000 for row in pending)
    remaining = max(0, HIGH_URGENCY_SETTLE_MS - oldest_age)
    return {
        "urgency": "high",
        "reason": "settle-window",
        "unreadCount": len(view.unread_band("high")),
        "pendingCount": len(pending),
        "settleRemainingMs": remaining,
        "claimedEventIds": [],
        "message": (
            f"High-urgency delivery at turn-interruptible is held: {len(pending)} pending"
            f" event(s) are inside the {HIGH_URGENCY_SETTLE_MS // 1000}s settle window"
            f" (settle-window; about {math.ceil(remaining / 1000)}s until the oldest"
            " can be delivered)."
        ),
    }


def ack_command(session_id: str, event_ids: list[str]) -> str:
    """The scoped ack that lifts a coalesced-until-ack hold: exactly these rows."""
    return f"agentmonitors events ack --session {session_id} --event-ids " + ",".join(event_ids)


def cap_hold(
    conn: sqlite3.Connection,
    view: SessionView,
    *,
    socket_path: str,
    cap: int = MAX_ADDITIONAL_CONTEXT,
) -> dict[str, Any] | None:
    """Settled high events a hook delivery now could not fit under its context cap.

    Measured the way a hook sizes its delivery (whole blocks oldest first, the coalesced
    reminder's footer reserved), so the count is what the next prompt leaves pending.
    """
    batch = high_batch(conn, view, None)
    if batch is None:
        return None
    summaries = batch.summaries()
    reminder = REMINDER if view.reminder_due("normal") else None
    budget = cap - len(HOOK_PACKING.footer(reminder, view.session_id, socket_path))
    fitting = max(
        1,
        max_events(
            summaries,
            cap=budget,
            packing=HOOK_PACKING,
            session_id=view.session_id,
            socket_path=socket_path,
        ),
    )
    if fitting >= len(summaries):
        return None
    deferred = len(summaries) - fitting
    return {
        "urgency": "high",
        "reason": "deferred-by-cap",
        "unreadCount": len(view.unread_band("high")),
        "pendingCount": len(view.claimable("high")),
        "deferredCount": deferred,
        "deliverableCount": fitting,
        "message": (
            f"{deferred} of {len(summaries)} settled high-urgency event(s) deferred by the"
            f" {cap}-char context cap (deferred-by-cap); the next prompt or tool call shows"
            f" {fitting}, the rest stay pending and surface at the ones after."
        ),
    }


def high_lease_hold(view: SessionView) -> dict[str, Any] | None:
    """Settled high rows another transport's reservation is surfacing right now.

    Without this line a hook whose high events a channel push holds would report no
    hold at all, and the user would wonder where they went.
    """
    leased = view.leased_count("high")
    if leased <= 0:
        return None
    unread = len(view.unread_band("high"))
    return {
        "urgency": "high",
        "reason": "reserved-in-flight",
        "unreadCount": unread,
        "pendingCount": len(view.claimable("high")),
        "leasedCount": leased,
        "message": (
            f"High-urgency delivery at turn-interruptible is held for {leased} of {unread}"
            " unread high event(s): an in-flight delivery reservation is surfacing them"
            " (reserved-in-flight). Nothing to do: they are claimed when that push lands,"
            " or claimable again if it fails."
        ),
    }


def coalescing_hold(view: SessionView) -> dict[str, Any] | None:
    """A due normal reminder waits to fold into a high batch that has not settled yet."""
    if not view.reminder_due("normal"):
        return None
    if not view.claimable("high") or view.settled_high():
        return None
    return {
        "urgency": "normal",
        "reason": "settle-window",
        "unreadCount": len(view.unread_band("normal")),
        "pendingCount": len(view.claimable("normal")),
        "message": (
            "Normal-urgency reminder at turn-interruptible is withheld (settle-window):"
            " high-urgency work is still inside its settle window, and the reminder will"
            " ride along with that delivery once it settles instead of interrupting twice."
        ),
    }


def reminder_hold(view: SessionView, urgency: str) -> dict[str, Any] | None:
    """The coalesced-until-ack guard of a reminder band, explained."""
    unread = view.unread_band(urgency)
    pending_ids = {row.id for row in view.pending_band(urgency)}
    claimable = len(view.claimable(urgency))
    leased = view.leased_count(urgency)
    claimed = len(unread) - claimable - leased
    if not unread or (claimed <= 0 and leased <= 0):
        return None
    label, lifecycle = _LABEL[urgency], _REMINDER_LIFECYCLE[urgency]
    head = f"{label}-urgency reminder at {lifecycle} is"
    if claimed <= 0:
        return {
            "urgency": urgency,
            "reason": "reserved-in-flight",
            "unreadCount": len(unread),
            "pendingCount": claimable,
            "leasedCount": leased,
            "message": (
                f"{head} held: {leased} of {len(unread)} unread {urgency} event(s) are being"
                " surfaced by an in-flight delivery reservation (reserved-in-flight). Nothing"
                " to do: they are claimed when the push lands, or claimable again if it fails."
            ),
        }
    claimed_ids = [row.id for row in unread if row.id not in pending_ids]
    ack = ack_command(view.session_id, claimed_ids)
    leased_note = (
        f" ({leased} more are held by an in-flight delivery reservation and need nothing)"
        if leased > 0
        else ""
    )
    if claimable <= 0 and leased <= 0:
        reason = "already-claimed"
        detail = (
            f"all {len(unread)} unread {urgency} event(s) are already claimed"
            f" (coalesced-until-ack). It fires again once they are acknowledged (`{ack}`);"
            f" a new {urgency} event arriving meanwhile does not restore it."
        )
    else:
        reason = "coalesced-until-ack"
        detail = (
            f"{claimed} of {len(unread)} unread {urgency} event(s) are already claimed"
            f" (coalesced-until-ack){leased_note}. It fires again only when every unread"
            f" {urgency} event is unclaimed: acknowledge the claimed ones (`{ack}`)."
        )
    return {
        "urgency": urgency,
        "reason": reason,
        "unreadCount": len(unread),
        "pendingCount": claimable,
        "claimedEventIds": claimed_ids,
        "leasedCount": leased,
        "ackCommand": ack,
        "message": f"{head} suppressed: {detail}",
    }


def diagnose(
    view: SessionView, lifecycle: Lifecycle, *, deferred: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The ``hook.diagnose`` report: every hold at ``lifecycle``, high band first.

    ``deferred`` is :func:`cap_hold`'s answer when the caller sized one (it needs the
    database and the transport's socket path, which a plain view does not carry).
    """
    holds: list[dict[str, Any]] = []
    if lifecycle == "turn-interruptible":
        for hold in (
            settle_hold(view),
            deferred,
            high_lease_hold(view),
            coalescing_hold(view) or reminder_hold(view, "normal"),
        ):
            if hold is not None:
                holds.append(hold)
    elif lifecycle == "turn-idle":
        hold = reminder_hold(view, "low")
        if hold is not None:
            holds.append(hold)
    return {
        "sessionId": view.session_id,
        "lifecycle": lifecycle,
        "unreadCounts": view.counts(),
        "holds": holds,
    }
