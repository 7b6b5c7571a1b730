"""The JSON shapes that cross the daemon socket for sessions, events, claims and reservations.

Field names are the wire's (camelCase) and must not change: hooks, the channel, the
command line and their tests read them. The daemon builds these; transports on the
hook path import this module only under ``TYPE_CHECKING`` (it needs ``typing``).
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict


class SessionRecord(TypedDict):
    """``AgentSessionRecord``; null optionals are left out."""

    id: str
    adapter: str
    hostSessionId: str
    agentIdentity: str
    role: str
    workspacePath: NotRequired[str]
    hookStatePath: str | None
    status: str
    baselineAt: str
    lastActiveAt: str
    lastRecapAt: NotRequired[str]
    dormantAt: NotRequired[str]
    createdAt: str
    updatedAt: str


class EventSummary(TypedDict):
    """``DeliveryEventSummary``: one surfaced event as a claim or a preview shows it."""

    eventId: str
    monitorId: str
    title: str
    summary: str
    objectDetail: str
    urgency: str
    createdAt: str
    body: str
    diffText: NotRequired[str]
    # With a diff, the watched object when the event names one (else the monitor id is
    # its key): what ``agentmonitors diff --object`` takes to show a cut change whole.
    objectKey: NotRequired[str]


class UnreadCounts(TypedDict):
    low: int
    normal: int
    high: int
    total: int


class DeliveryClaim(TypedDict):
    """``DeliveryClaim``: what one delivery surfaces, decided by the daemon."""

    sessionId: str
    mode: str
    urgency: NotRequired[str]
    lifecycle: str
    message: str
    unreadCounts: UnreadCounts
    events: list[EventSummary]
    coalescedReminder: NotRequired[str]
    coalescedNormalCount: NotRequired[int]


class Reservation(TypedDict):
    """A leased claim: committed once shown, released (or lapsed) otherwise."""

    reservationId: str
    claim: DeliveryClaim


class RenderedReply(TypedDict):
    """``delivery.reserveRendered``: reserved and rendered.

    ``session`` is None when no session has the host session id; ``reservation`` is
    None (and ``text`` empty) when there is nothing to deliver; ``held`` says why a
    channel may not push yet. ``deliveryId``/``meta`` are the channel's, and
    ``confirmedDeliveryIds`` answers the ``channelDeliveryIds`` a hook passed.
    """

    session: SessionRecord | None
    reservation: NotRequired[Reservation | None]
    text: NotRequired[str]
    moreDeferred: NotRequired[bool]
    shownEventIds: NotRequired[list[str]]
    held: NotRequired[str]
    confirmedDeliveryIds: NotRequired[list[str]]
    deliveryId: NotRequired[str]
    meta: NotRequired[dict[str, str]]


class AckResult(TypedDict):
    """What an acknowledgement did (``events.ack`` adds ``ok`` on the wire)."""

    acknowledged: int
    heldByDelivery: int
    unknownEventIds: list[str]


EventRecord = dict[str, Any]
"""``events.list`` rows: an event's columns in camelCase, plus ``deliveryState`` for a
session (open-ended: monitors' payloads and scopes are arbitrary JSON)."""
