"""Reserve a delivery sized to what the transport can show.

See docs/architecture.md, "The delivery protocol".

The daemon runs this against its :class:`~agentmonitors.delivery.service.DeliveryService`
(any :class:`Reserver` will do), inside one pinned instant, for ``hook.reserveRendered``
and ``channel.reserveRendered``: a transport pays one round trip, not five.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from agentmonitors.delivery.render import (
    CHANNEL,
    HOOK,
    claim_fit,
    footer,
    max_events,
    render_channel_shown,
    render_hook_shown,
)

if TYPE_CHECKING:
    from typing import TypeAlias

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
        transport: str = HOOK,
    ) -> Reservation | None: ...

    def release(self, reservation_id: str) -> None: ...


NOTHING: Sized = (None, "", False, [])


def _finish(
    service: Reserver,
    reservation: Reservation,
    *,
    packer: str,
    socket_path: str,
    cap: int,
    more_deferred: bool,
) -> Sized:
    claim: DeliveryClaim = reservation["claim"]
    if packer == HOOK:
        text, shown = render_hook_shown(claim, socket_path, more_deferred=more_deferred, cap=cap)
    else:
        text, _meta, shown = render_channel_shown(
            claim, socket_path, more_deferred=more_deferred, cap=cap
        )
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
        self, service: Reserver, session_id: str, *, packer: str, socket_path: str, cap: int
    ) -> None:
        self.service = service
        self.session_id = session_id
        self.packer = packer
        self.socket_path = socket_path
        self.cap = cap
        self.forced: int | None = None

    def finish(self, reservation: Reservation, more_deferred: bool) -> Sized:
        return _finish(
            self.service,
            reservation,
            packer=self.packer,
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
        budget = self.cap - len(footer(reminder, self.session_id, self.socket_path, self.packer))
        limit = max_events(
            preview,
            cap=budget,
            packer=self.packer,
            session_id=self.session_id,
            socket_path=self.socket_path,
        )
        if self.forced is not None:
            limit = min(limit, self.forced)
        limit = max(1, limit)
        return limit, limit < len(preview)

    def _fit(self, claim: DeliveryClaim, more_deferred: bool) -> tuple[bool, int]:
        return claim_fit(
            claim, self.socket_path, packer=self.packer, more_deferred=more_deferred, cap=self.cap
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
            self.session_id, _SIZED_LIFECYCLE, limit, transport=self.packer
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
    packer: str,
    socket_path: str,
    cap: int,
) -> Sized:
    """Reserve the next delivery and render it: ``(reservation, text, more_deferred, shown)``.

    ``packer`` is ``"hook"`` or ``"channel"`` (also the transport the reservation is
    for) and ``cap`` the transport's cap (4000 or 20000). ``text`` is the hook's
    ``additionalContext`` or the channel's ``content`` (its ``meta`` is
    :func:`~agentmonitors.delivery.render.channel_meta` of the reservation's claim);
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
    if packer not in (HOOK, CHANNEL):
        raise ValueError(f"unknown packer {packer!r}")
    sizing = _Sizing(service, session_id, packer=packer, socket_path=socket_path, cap=cap)
    if lifecycle != _SIZED_LIFECYCLE:
        reservation = service.reserve(session_id, lifecycle, transport=packer)
        return NOTHING if reservation is None else sizing.finish(reservation, False)
    for attempt in range(1, MAX_RESERVE_ATTEMPTS + 1):
        sized = sizing.attempt(attempt)
        if sized is not None:
            return sized
    return NOTHING
