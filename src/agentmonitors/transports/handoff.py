"""The one delivery path every transport takes: reserve, render, write, commit.

The daemon finds the session, sizes, reserves and renders in one request
(``delivery.reserveRendered``); the transport only writes
the text where its host reads it. What was written is committed; a reservation with
nothing to write, or whose write failed, is released, so its events stay pending.
Host specifics (payloads, output shapes) stay with each transport.

Standard library only: ``hook deliver`` runs this on every prompt and tool call.
"""

from __future__ import annotations

# ``typing`` stays out of the run-time imports: the hook path pays for each one.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from agentmonitors.delivery.wire import RenderedReply

    Ipc = Callable[[str, dict[str, Any]], Any]

NOTHING = "nothing"
"""Nothing to deliver (any reservation was released)."""
UNWRITTEN = "unwritten"
"""The write failed; the reservation was released."""
COMMITTED = "committed"
"""Written, and the commit landed."""
LAPSED = "lapsed"
"""Written, but the reservation had lapsed: its rows stay pending."""


def pending_text(reply: RenderedReply | None) -> str:
    """The rendered text a reply asks to be written; "" when there is none."""
    if not isinstance(reply, dict) or reply.get("reservation") is None:
        return ""
    return reply.get("text") or ""


def hand_off(
    ipc: Ipc,
    reply: RenderedReply | None,
    write: Callable[[str], bool],
    *,
    commit: Callable[[str], bool] | None = None,
) -> str:
    """Write a reserved delivery, then commit it; release whatever was not written.

    ``write`` gets the rendered text and says whether it reached the host.
    ``commit`` takes the reservation id and says whether it landed; the default is
    ``hook.commit``, and a channel passes its own (a push commits on proof of display).
    Returns :data:`NOTHING`, :data:`UNWRITTEN`, :data:`COMMITTED` or :data:`LAPSED`.
    IPC errors while committing propagate; a failing release is ignored (its lease
    lapses on its own).
    """
    reservation = reply.get("reservation") if isinstance(reply, dict) else None
    if reservation is None:
        return NOTHING
    reservation_id = reservation["reservationId"]
    text = pending_text(reply)
    if not text or not write(text):
        _release(ipc, reservation_id)
        return NOTHING if not text else UNWRITTEN
    if commit is None:
        landed = ipc("hook.commit", {"reservationId": reservation_id}) is not None
    else:
        landed = commit(reservation_id)
    return COMMITTED if landed else LAPSED


def _release(ipc: Ipc, reservation_id: str) -> None:
    try:
        ipc("hook.release", {"reservationId": reservation_id})
    except Exception:  # the lease lapses by itself; the caller's outcome stands
        return
