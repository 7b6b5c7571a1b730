"""``delivery.reserveRendered``: find the session, size, reserve and render in one request.

Sizing (preview, reminder preview, reserve, re-check, release and retry) runs here
against the service itself, so a transport pays one round trip instead of five and
then only writes the text and commits it (see ``transports/handoff.py``). What differs
between transports is asked of the transport (``delivery/transports/``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentmonitors.delivery.sizing import reserve_sized
from agentmonitors.delivery.transports.registry import transport as transport_named

if TYPE_CHECKING:
    from collections.abc import Sequence

    from agentmonitors.delivery.service import DeliveryService
    from agentmonitors.delivery.wire import RenderedReply


def reserve_rendered(
    service: DeliveryService,
    host_session_id: str,
    lifecycle: str,
    *,
    socket_path: str,
    transport: str = "hook",
    cap: int | None = None,
    channel_delivery_ids: Sequence[str] | None = None,
) -> RenderedReply:
    """The session of ``host_session_id`` and its next delivery, reserved and rendered.

    ``channel_delivery_ids`` are channel pushes this hook's prompt showed: they are
    confirmed first (what a prompt shows is delivered before anything else is sized).
    A transport that commits on proof is held (``awaiting-proof``) while its earlier
    pushes still wait for theirs; its delivery gets an id to prove.
    """
    kind = transport_named(transport)
    session = service.find_session(host_session_id)
    if session is None:
        return {"session": None}
    session_id = session["id"]
    confirmed = (
        service.confirm_pushes(session_id, channel_delivery_ids) if channel_delivery_ids else []
    )
    if kind.commits_on_proof and not service.pushes.may_push(session_id):
        return {"session": session, "reservation": None, "text": "", "held": "awaiting-proof"}
    with service.one_instant():
        reservation, text, more_deferred, shown = reserve_sized(
            service,
            session_id,
            lifecycle,
            transport=kind.name,
            socket_path=socket_path,
            cap=cap or kind.cap,
        )
    if reservation is not None:
        # What the text printed is what the session saw: a recap cut to the cap moves
        # the diff base for the events it showed, not for every event it meant to.
        service.reservations.narrow_seen(reservation["reservationId"], shown)
    reply: RenderedReply = {
        "session": session,
        "reservation": reservation,
        "text": text,
        "moreDeferred": more_deferred,
        "shownEventIds": list(shown),
    }
    if channel_delivery_ids is not None:
        reply["confirmedDeliveryIds"] = confirmed
    if kind.commits_on_proof and reservation is not None:
        delivery_id = reservation["reservationId"]
        claim = reservation["claim"]
        service.pushes.record(
            delivery_id, session_id, frozenset(event["eventId"] for event in claim["events"])
        )
        reply["deliveryId"] = delivery_id
        reply["meta"] = {**(kind.reply_meta(claim) or {}), "delivery_id": delivery_id}
    return reply
