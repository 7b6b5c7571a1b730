"""What the live line (``events follow``) names next, decided without writing anything.

See docs/architecture.md, "The delivery protocol". The hooks surface a band's events as
one coalesced reminder that stays quiet until they are acknowledged; the live line wakes
an idle session instead, so it names each event once, as soon as it settles: every
settled high event and every normal and low one that nothing has surfaced yet (neither
claimed nor leased), whatever is still unacknowledged. An event it names is claimed
when the line is written, so it is never named again, and no hook surfaces it at a
turn; the session's diff base stays where it was (``seen`` is empty: a line names a
change, it never shows it), so a later ``diff --session``, ``events list`` or recap
still shows the whole change. Which urgencies it names is the enable file's ``wake:``.
"""

from __future__ import annotations

import sqlite3

from agentmonitors.delivery.collapse import CollapseView, collapse_view
from agentmonitors.delivery.decide import Decision, SessionView
from agentmonitors.delivery.records import DeliveryRow, Lifecycle, summarize, summary_json
from agentmonitors.delivery.wire import DeliveryClaim

__all__ = ["decide_follow"]

# The order a line names its events in: what matters most first.
_ORDER = ("high", "normal", "low")


def _named(view: SessionView, urgencies: frozenset[str]) -> list[CollapseView]:
    """Per urgency, what a line may name: settled high, and normal and low as soon as
    they are stored, each ``net`` group once (its newest event)."""
    found = []
    for urgency in _ORDER:
        if urgency not in urgencies:
            continue
        rows = view.settled_high() if urgency == "high" else view.claimable(urgency)
        if rows:
            found.append(collapse_view(rows))
    return found


def decide_follow(
    conn: sqlite3.Connection,
    session: sqlite3.Row,
    leased: frozenset[str],
    now_ms: int,
    *,
    urgencies: frozenset[str],
    max_events: int | None = None,
) -> Decision | None:
    """The next live line's claim for ``session``, naming at most ``max_events`` events
    (whole ``net`` groups, most urgent first); None when there is nothing new to name.

    Subagent sessions never get one, as with every claim.
    """
    if session["role"] != "lead":
        return None
    view = SessionView.read(conn, str(session["id"]), leased, now_ms)
    return _decision(view, urgencies, max_events)


def _decision(
    view: SessionView, urgencies: frozenset[str], max_events: int | None
) -> Decision | None:
    shown: list[DeliveryRow] = []
    candidates: list[DeliveryRow] = []
    for collapsed in _named(view, urgencies):
        delivered = collapsed.delivered
        room = len(delivered) if max_events is None else max(0, max_events - len(shown))
        kept = delivered[:room]
        if not kept:
            break
        shown += kept
        # A named survivor stands for its whole group: claiming it folds the rest.
        candidates += collapsed.rows_of(kept)
    if not shown:
        return None
    urgency = shown[0].urgency
    # A line naming only low events is what the end of a turn would surface as the low
    # reminder; anything else is what a prompt would.
    lifecycle: Lifecycle = "turn-idle" if urgency == "low" else "turn-interruptible"
    claim: DeliveryClaim = {
        "sessionId": view.session_id,
        "mode": "delivery",
        "urgency": urgency,
        "lifecycle": lifecycle,
        "message": summarize(shown),
        "unreadCounts": view.counts(),
        "events": [summary_json(row) for row in shown],
    }
    return Decision(view.session_id, lifecycle, tuple(candidates), False, claim, ())
