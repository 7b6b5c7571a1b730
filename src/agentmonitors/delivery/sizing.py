"""Reserve a delivery sized to what the transport can show.

See docs/architecture.md, "The delivery protocol".

The daemon runs this against its :class:`~agentmonitors.delivery.service.DeliveryService`
(any :class:`Reserver` will do), inside one pinned instant, for
``delivery.reserveRendered``: a transport pays one round trip, not five. The transport
(``delivery/transports/``) says how its blocks are laid out and rendered.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from agentmonitors.delivery.layout import claim_fit, max_events
from agentmonitors.delivery.transports.registry import transport as transport_named

if TYPE_CHECKING:
    from typing import TypeAlias

    from agentmonitors.delivery.packing import Packing
    from agentmonitors.delivery.transports.base import Transport
    from agentmonitors.delivery.wire import DeliveryClaim, EventSummary, Reservation

    Sized: TypeAlias = tuple[Reservation | None, str, bool, list[str]]
    """``(reservation, text, more_deferred, shown event ids)``."""

__all__ = ["MAX_RESERVE_ATTEMPTS", "Reserver", "reserve_sized"]

MAX_RESERVE_ATTEMPTS = 3
"""Sizing races the reservation at most this often; the last attempt forces one event."""

_SIZED_LIFECYCLE = "turn-interruptible"


class Reserver(Protocol):
    """The four questions sizing asks the delivery service."""

    def preview(self, session_id: str, limit: int | None = None) -> list[EventSummary]: ...

    def preview_reminder(self, session_id: str) -> str | None: ...

    def reserve(
        self,
        session_id: str,
        lifecycle: str,
        max_events: int | None = None,
        *,
        transport: str = "hook",
    ) -> Reservation | None: ...

    def release(self, reservation_id: str) -> None: ...


NOTHING: Sized = (None, "", False, [])


def _finish(
    service: Reserver,
    reservation: Reservation,
    *,
    transport: Transport,
    socket_path: str,
    cap: int,
    more_deferred: bool,
) -> Sized:
    claim: DeliveryClaim = reservation["claim"]
    text, shown = transport.render(claim, socket_path, more_deferred=more_deferred, cap=cap)
    if not text:
        # Nothing would be surfaced (a blank reminder): claim nothing either.
        service.release(reservation["reservationId"])
        return NOTHING
    return reservation, text, more_deferred, shown


def _preview(service: Reserver, session_id: str, cap: int) -> list[EventSummary]:
    """Ask for about as many summaries as fit: a real block is rarely under 100 chars.

    A session with a thousand unread events then costs a few kilobytes of summaries,
    not half a megabyte. Asking for too few is safe: the re-preview after the
    reservation sees the rest and marks them deferred.
    """
    return service.preview(session_id, cap // 100 + 2)


class _Sizing:
    """One sized reservation: the fixed inputs, and the cap a failed fit proved necessary."""

    def __init__(
        self,
        service: Reserver,
        session_id: str,
        *,
        transport: Transport,
        socket_path: str,
        cap: int,
    ) -> None:
        self.service = service
        self.session_id = session_id
        self.transport = transport
        # Registration refused a transport without one.
        packing: Packing | None = transport.packing
        assert packing is not None
        self.packing = packing
        self.socket_path = socket_path
        self.cap = cap
        self.forced: int | None = None

    def finish(self, reservation: Reservation, more_deferred: bool) -> Sized:
        return _finish(
            self.service,
            reservation,
            transport=self.transport,
            socket_path=self.socket_path,
            cap=self.cap,
            more_deferred=more_deferred,
        )

    def limit(self, attempt: int) -> tuple[int | None, bool]:
        """``(maxEvents or None, more_deferred)`` for this attempt, from a fresh preview."""
        preview = _preview(self.service, self.session_id, self.cap)
        # The reminder only matters as the footer of a body claim; with no settled
        # events there is no body to size, so it is not asked.
        reminder = self.service.preview_reminder(self.session_id) if preview else None
        if attempt == MAX_RESERVE_ATTEMPTS:
            return 1, len(preview) > 1
        if not preview:
            # The preview raced empty: keep the cap that was proven necessary.
            return self.forced, False
        budget = self.cap - len(self.packing.footer(reminder, self.session_id, self.socket_path))
        limit = max_events(
            preview,
            cap=budget,
            packing=self.packing,
            session_id=self.session_id,
            socket_path=self.socket_path,
        )
        if self.forced is not None:
            limit = min(limit, self.forced)
        limit = max(1, limit)
        return limit, limit < len(preview)

    def _fit(self, claim: DeliveryClaim, more_deferred: bool) -> tuple[bool, int]:
        return claim_fit(
            claim,
            self.socket_path,
            packing=self.packing,
            more_deferred=more_deferred,
            cap=self.cap,
        )

    def fit(self, reservation: Reservation, more_deferred: bool) -> tuple[bool, int, bool]:
        """Trust only what was reserved: ``(fits, events that fit, more_deferred)``.

        A fitting claim is re-checked against a fresh preview, so settled work outside
        the reservation is signposted; a failing re-preview releases first.
        """
        claim = reservation["claim"]
        fits, included = self._fit(claim, more_deferred)
        if not fits or more_deferred:
            return fits, included, more_deferred
        try:
            # Leased rows are left out of a preview, so one summary is enough to know
            # that settled work waits outside this reservation.
            again = self.service.preview(self.session_id, 1)
        except Exception:
            self.service.release(reservation["reservationId"])
            raise
        reserved = {event["eventId"] for event in claim["events"]}
        if all(event["eventId"] in reserved for event in again):
            return fits, included, False
        fits, included = self._fit(claim, True)
        return fits, included, True

    def attempt(self, attempt: int) -> Sized | None:
        """One reserve; None when it did not fit and was released (try again)."""
        limit, more_deferred = self.limit(attempt)
        reservation = self.service.reserve(
            self.session_id, _SIZED_LIFECYCLE, limit, transport=self.transport.name
        )
        if reservation is None:
            return NOTHING
        if not reservation["claim"]["events"]:
            # A reminder: nothing to size, and the preview's deferral described other rows.
            return self.finish(reservation, False)
        fits, included, more_deferred = self.fit(reservation, more_deferred)
        if fits:
            return self.finish(reservation, more_deferred)
        self.service.release(reservation["reservationId"])
        self.forced = max(1, included)
        return None


def reserve_sized(
    service: Reserver,
    session_id: str,
    lifecycle: str,
    *,
    transport: str,
    socket_path: str,
    cap: int,
) -> Sized:
    """Reserve the next delivery and render it: ``(reservation, text, more_deferred, shown)``.

    ``transport`` names a registered transport (``delivery/transports/``): its packing
    lays the blocks out, its ``render`` makes ``text`` (the hook's ``additionalContext``,
    the channel's ``content``), and the reservation is taken for it; ``cap`` is its cap
    for this request;
    ``shown`` lists the ids of the events the text shows, which the caller compares
    with the claim before committing (a recap may show fewer). ``(None, "", False, [])``
    when there is nothing to deliver; a reservation whose text would be empty is
    released here.

    ``turn-interruptible`` is sized: preview, reserve at most the events that fit,
    re-check the fit against the events actually reserved (release and retry with a
    tighter cap on a mismatch; the last attempt forces one event), and re-preview so
    that settled work outside the reservation is signposted. Other lifecycles reserve
    unsized. Errors propagate; a failing re-preview releases first.
    """
    kind = transport_named(transport)
    sizing = _Sizing(service, session_id, transport=kind, socket_path=socket_path, cap=cap)
    if lifecycle != _SIZED_LIFECYCLE:
        reservation = service.reserve(session_id, lifecycle, transport=kind.name)
        return NOTHING if reservation is None else sizing.finish(reservation, False)
    for attempt in range(1, MAX_RESERVE_ATTEMPTS + 1):
        sized = sizing.attempt(attempt)
        if sized is not None:
            return sized
    return NOTHING
