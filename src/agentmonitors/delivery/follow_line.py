"""The next delivery of ``events follow``, as one line.

``events follow`` runs under Claude Code's Monitor tool, which turns every stdout line
into a model turn, so a delivery must be exactly one line. The daemon reserves what a
hook would get (same settle windows, same coalesced reminder, same net collapse) and
renders it here as one line of at most :data:`MAX_FOLLOW_LINE` code points: the
attribution, each event's monitor, urgency and title, the exact ack command and the
unread listing that holds the full detail.

Lifecycle: follow runs while the session waits, so it claims what the end of a turn
would surface. ``turn-interruptible`` first (settled high, normal as its coalesced
reminder), then ``turn-idle`` (the low reminder) when that has nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentmonitors.delivery.text import (
    HOOK_PREFIX,
    _socket_clause,
    counted_cut,
)
from agentmonitors.untrusted import clean_line, escape_invisible

if TYPE_CHECKING:
    from collections.abc import Mapping


MAX_FOLLOW_LINE = 600
"""Code points per delivery line: a model turn's worth of signal, never the detail."""
_ELLIPSIS = "…"


def _flat(value: object) -> str:
    """One line: the untrusted-text line rule (a break or an invisible character is
    shown as its escape), then every run of whitespace one space."""
    text = value if isinstance(value, str) else ("" if value is None else str(value))
    return " ".join(clean_line(text).split())


def _flat_own(value: object) -> str:
    """Text we wrote (a reminder) on one line: its breaks are spaces, any invisible
    character escaped."""
    text = value if isinstance(value, str) else ("" if value is None else str(value))
    return " ".join(escape_invisible(text).split())


def _more(left_out: int) -> str:
    return f"{_ELLIPSIS} ({left_out:,} more character{'' if left_out == 1 else 's'})."


def _clip(text: str, limit: int) -> str:
    """``text`` within ``limit``, a cut one saying how many characters it left out (the
    line's listing shows them); sized like a delivery's marker (``counted_cut``)."""
    if len(text) <= limit:
        return text
    kept, more = counted_cut(len(text), limit, _more)
    return text[:kept] + more


def follow_line(claim: Mapping[str, Any], socket_path: str, *, cap: int = MAX_FOLLOW_LINE) -> str:
    """One delivery line for ``claim``; ``""`` when it would surface nothing.

    The commands always survive the cap: the event list and the reminder are clipped
    first, so the agent can still acknowledge and read the detail.
    """
    session_id = _flat(claim.get("sessionId"))
    socket = _socket_clause(socket_path)
    listing = f"agentmonitors events list --session {session_id}{socket} --unread"
    events = [event for event in claim.get("events") or [] if isinstance(event, dict)]
    if events:
        ids = ",".join(_flat(event.get("eventId")) for event in events)
        tail = (
            f" Ack when handled: agentmonitors events ack --session {session_id}{socket}"
            f" --event-ids {ids}. Full detail: {listing}"
        )
        parts = [
            f"[{_flat(event.get('urgency'))}] {_flat(event.get('monitorId'))}: "
            f"{_flat(event.get('title'))}"
            for event in events
        ]
        count = f"{len(events)} monitor events: " if len(events) > 1 else ""
        body = count + "; ".join(parts) + "."
        reminder = _flat_own(claim.get("coalescedReminder"))
        if reminder:
            body += " " + reminder
    else:
        body = _flat_own(claim.get("message"))
        if not body:
            return ""
        tail = (
            f" Full detail: {listing}, then agentmonitors events ack --session "
            f"{session_id}{socket} once handled."
        )
    room = cap - len(HOOK_PREFIX) - len(tail)
    if room < 16:
        # Ids that long leave no room for a summary: name the listing alone.
        return _clip(f"{HOOK_PREFIX}{body}", cap - len(listing) - 1) + " " + listing
    return HOOK_PREFIX + _clip(body, room) + tail
