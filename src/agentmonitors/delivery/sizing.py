"""Reserve a delivery sized to what the transport can show (spec 06 §4.4).

The daemon is reached only through an injected ``call(method, params)`` that returns
the IPC result or raises, so this module has no I/O of its own. Standard library
only, nothing imported at module level: this runs on the hook path.
"""

from __future__ import annotations

from agentmonitors.delivery.render import (
    CHANNEL,
    HOOK,
    claim_fit,
    footer,
    max_events,
    render_channel_shown,
    render_hook_shown,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    Call = Callable[[str, dict[str, Any]], Any]
    Sized = tuple[dict[str, Any] | None, str, bool, list[str]]

__all__ = ["MAX_RESERVE_ATTEMPTS", "reserve_sized"]

MAX_RESERVE_ATTEMPTS = 3
"""Sizing races the reservation at most this often; the last attempt forces one event."""

_SIZED_LIFECYCLE = "turn-interruptible"


def _summaries(value: Any) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _reminder(value: Any) -> str | None:
    reminder = value.get("reminder") if isinstance(value, dict) else None
    return reminder if isinstance(reminder, str) else None


def _claim(reservation: Mapping[str, Any]) -> dict[str, Any]:
    claim = reservation.get("claim")
    return claim if isinstance(claim, dict) else {}


def _claim_events(claim: Mapping[str, Any]) -> list[dict[str, Any]]:
    return _summaries(claim.get("events"))


def _release(call: Call, reservation: Mapping[str, Any]) -> None:
    call("hook.release", {"reservationId": reservation.get("reservationId")})


def _finish(
    call: Call,
    reservation: dict[str, Any],
    *,
    packer: str,
    socket_path: str,
    cap: int,
    more_deferred: bool,
) -> Sized:
    claim = _claim(reservation)
    if packer == HOOK:
        text, shown = render_hook_shown(claim, socket_path, more_deferred=more_deferred, cap=cap)
    else:
        text, _meta, shown = render_channel_shown(
            claim, socket_path, more_deferred=more_deferred, cap=cap
        )
    if not text:
        # Nothing would be surfaced (a blank reminder): claim nothing either.
        _release(call, reservation)
        return None, "", False, []
    return reservation, text, more_deferred, shown


def _preview_params(session_id: str, cap: int) -> dict[str, object]:
    """Ask for about as many summaries as fit: a real block is rarely under 100 chars.

    A session with a thousand unread events then costs the hook a few kilobytes,
    not half a megabyte. Asking for too few is safe: the re-preview after the
    reservation sees the rest and marks them deferred.
    """
    return {"sessionId": session_id, "limit": cap // 100 + 2}


def reserve_sized(
    call: Call,
    session_id: str,
    lifecycle: str,
    *,
    packer: str,
    socket_path: str,
    cap: int,
) -> Sized:
    """Reserve the next delivery and render it: ``(reservation, text, more_deferred, shown)``.

    ``packer`` is ``"hook"`` or ``"channel"`` and ``cap`` the transport's cap (4000 or
    20000). ``text`` is the hook's ``additionalContext`` or the channel's ``content``
    (its ``meta`` is :func:`~agentmonitors.delivery.render.channel_meta` of the
    reservation's claim); ``shown`` lists the ids of the events the text shows, which
    the caller compares with the claim before committing (a recap may show fewer).
    ``(None, "", False, [])`` when there is nothing to deliver; a reservation whose
    text would be empty is released here.

    ``turn-interruptible`` is sized: preview, reserve at most the events that fit,
    re-check the fit against the events actually reserved (release and retry with a
    tighter cap on a mismatch; the last attempt forces one event), and re-preview so
    that settled work outside the reservation is signposted. Other lifecycles reserve
    unsized. IPC errors propagate; a failing re-preview releases first.
    """
    if packer not in (HOOK, CHANNEL):
        raise ValueError(f"unknown packer {packer!r}")
    nothing: Sized = (None, "", False, [])
    if lifecycle != _SIZED_LIFECYCLE:
        reservation = call("hook.reserve", {"sessionId": session_id, "lifecycle": lifecycle})
        if not isinstance(reservation, dict):
            return nothing
        return _finish(
            call, reservation, packer=packer, socket_path=socket_path, cap=cap, more_deferred=False
        )

    forced: int | None = None
    for attempt in range(1, MAX_RESERVE_ATTEMPTS + 1):
        preview = _summaries(call("hook.preview", _preview_params(session_id, cap)))
        # The reminder only matters as the footer of a body claim; with no settled
        # events there is no body to size, so skip that round trip.
        reminder = (
            _reminder(call("hook.previewReminder", {"sessionId": session_id})) if preview else None
        )
        budget = cap - len(footer(reminder, session_id, socket_path, packer))
        limit: int | None = None
        more_deferred = False
        if attempt == MAX_RESERVE_ATTEMPTS:
            limit = 1
            more_deferred = len(preview) > 1
        elif preview:
            limit = max_events(
                preview, cap=budget, packer=packer, session_id=session_id, socket_path=socket_path
            )
            if forced is not None:
                limit = min(limit, forced)
            limit = max(1, limit)
            more_deferred = limit < len(preview)
        elif forced is not None:
            limit = forced  # the preview raced empty: keep the cap that was proven necessary

        params: dict[str, Any] = {"sessionId": session_id, "lifecycle": lifecycle}
        if limit is not None:
            params["maxEvents"] = limit
        reservation = call("hook.reserve", params)
        if not isinstance(reservation, dict):
            return nothing
        claim = _claim(reservation)
        events = _claim_events(claim)
        if not events:
            # A reminder: nothing to size, and the preview's deferral described other rows.
            return _finish(
                call,
                reservation,
                packer=packer,
                socket_path=socket_path,
                cap=cap,
                more_deferred=False,
            )

        # Trust only what was actually reserved: its events, its footer, its session.
        fits, included = claim_fit(
            claim, socket_path, packer=packer, more_deferred=more_deferred, cap=cap
        )
        if fits and not more_deferred:
            try:
                again = _summaries(call("hook.preview", _preview_params(session_id, cap)))
            except Exception:
                _release(call, reservation)
                raise
            reserved_ids = {event.get("eventId") for event in events}
            if any(event.get("eventId") not in reserved_ids for event in again):
                more_deferred = True
                fits, included = claim_fit(
                    claim, socket_path, packer=packer, more_deferred=True, cap=cap
                )
        if fits:
            return _finish(
                call,
                reservation,
                packer=packer,
                socket_path=socket_path,
                cap=cap,
                more_deferred=more_deferred,
            )
        _release(call, reservation)
        forced = max(1, included)
    return nothing
