"""The next delivery of ``events follow``, as one line.

``events follow`` runs under Claude Code's Monitor tool (or as the plugin's monitor),
which turns every stdout line into a model turn, so a delivery must be exactly one line.
The daemon reserves what is new since the last line (``delivery/follow_decide.py``) and
renders it here as one line of at most :data:`MAX_FOLLOW_LINE` code points: the
attribution, each monitor with its urgency and its event's title (or how many changes it
has), the exact ack command and the unread listing that holds the full detail. Monitor
names and titles are the project's text: each goes through the one-line rule for
untrusted text (docs/architecture.md, "Text and sizes") before anything is measured.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentmonitors.delivery.text import (
    HOOK_PREFIX,
    _socket_clause,
    counted_cut,
)
from agentmonitors.untrusted import clean_line, escape_invisible

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


MIN_NAMED = 60
"""Room a line keeps for naming what changed; the follow transport names fewer events
(their ids are in the ack command) rather than leave less."""


_MIN_ROOM = 40
"""Below this, a cut could not say how much it left out: the line names the listing alone."""


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def _groups(events: list[dict[str, Any]]) -> list[tuple[str, int]]:
    """Each monitor's part of the line, in the claim's order, with how many events it
    names: ``[high] notes: <title>``; for several, ``[normal] docs: 3 changes in Docs
    changed`` when they share their title (a monitor's ``name:`` is its events' title),
    else ``[normal] docs: 3 changes, latest: <the newest title>``."""
    grouped: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for event in events:
        key = (_flat(event.get("monitorId")), _flat(event.get("urgency")))
        grouped.setdefault(key, []).append(event)
    parts = []
    for (monitor, urgency), members in grouped.items():
        titles = [_flat(member.get("title")) for member in members]
        if len(members) == 1:
            what = titles[0]
        elif len(set(titles)) == 1:
            what = f"{_plural(len(members), 'change')} in {titles[0]}"
        else:
            what = f"{_plural(len(members), 'change')}, latest: {titles[-1]}"
        parts.append((f"[{urgency}] {monitor}: {what}", len(members)))
    return parts


def _named(events: list[dict[str, Any]], room: int) -> str:
    """What changed, within ``room``: every monitor's part while they fit, else as many
    whole parts as fit and how many changes it left out; a lone part too long for the
    room is cut and says how many characters it left out."""
    parts = _groups(events)
    lead = (
        ""
        if len(parts) == 1
        else (f"{_plural(len(events), 'change')} in {_plural(len(parts), 'monitor')}: ")
    )
    for kept in range(len(parts), 0, -1):
        left = sum(count for _text, count in parts[kept:])
        rest = f"; and {_plural(left, 'more change')}." if left else "."
        text = lead + "; ".join(text for text, _count in parts[:kept]) + rest
        if len(text) <= room:
            return text
    if len(parts) == 1:
        return _clip(lead + parts[0][0] + ".", room)
    left = len(events) - parts[0][1]
    rest = f" And {_plural(left, 'more change')}."
    limit = room - len(lead) - len(rest)
    if limit < _MIN_ROOM:
        # Too narrow to cut a part and still count the rest: the count alone.
        return _clip(lead.rstrip(": ") + ".", room)
    return lead + _clip(parts[0][0] + ".", limit) + rest


def _tail(session_id: str, socket: str, ids: str) -> str:
    listing = f"agentmonitors events list --session {session_id}{socket} --unread"
    return (
        f" Ack when handled: agentmonitors events ack --session {session_id}{socket}"
        f" --event-ids {ids}. Full detail: {listing}"
    )


def events_that_fit(
    claim: Mapping[str, Any], socket_path: str, *, cap: int = MAX_FOLLOW_LINE
) -> int:
    """How many of the claim's events (at least one) one line can name with the exact
    ack command and :data:`MIN_NAMED` characters to say what changed."""
    session_id = _flat(claim.get("sessionId"))
    socket = _socket_clause(socket_path)
    ids = [_flat(event.get("eventId")) for event in claim.get("events") or []]
    fixed = len(HOOK_PREFIX) + len(_tail(session_id, socket, "")) + MIN_NAMED
    count, used = 0, fixed
    for event_id in ids:
        used += len(event_id) + (1 if count else 0)
        if used > cap:
            break
        count += 1
    return max(1, count)


def follow_line(claim: Mapping[str, Any], socket_path: str, *, cap: int = MAX_FOLLOW_LINE) -> str:
    """One delivery line for ``claim``; ``""`` when it would surface nothing.

    The commands always survive the cap: what changed is cut first, and says how much
    it left out, so the agent can still acknowledge and read the detail.
    """
    session_id = _flat(claim.get("sessionId"))
    socket = _socket_clause(socket_path)
    listing = f"agentmonitors events list --session {session_id}{socket} --unread"
    events = [event for event in claim.get("events") or [] if isinstance(event, dict)]
    reminder = _flat_own(claim.get("coalescedReminder"))
    if events:
        tail = _tail(session_id, socket, ",".join(_flat(event.get("eventId")) for event in events))
        room = cap - len(HOOK_PREFIX) - len(tail)
        if room >= _MIN_ROOM:
            extra = f" {reminder}" if reminder else ""
            named = _named(events, room - len(extra))
            return HOOK_PREFIX + named + extra + tail
        body = "; ".join(text for text, _count in _groups(events)) + "."
    else:
        body = _flat_own(claim.get("message"))
        if not body:
            return ""
        tail = (
            f" Full detail: {listing}, then agentmonitors events ack --session "
            f"{session_id}{socket} once handled."
        )
        room = cap - len(HOOK_PREFIX) - len(tail)
        if room >= _MIN_ROOM:
            return HOOK_PREFIX + _clip(body, room) + tail
    # Ids that long leave no room for a summary: name the listing alone.
    return _clip(f"{HOOK_PREFIX}{body}", cap - len(listing) - 1) + " " + listing
