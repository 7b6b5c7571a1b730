"""``hook deliver --debug``: each step explained on stderr, and the lookups it needs.

Split from ``deliver`` so the plain hook path reads less; everything here runs only
with ``--debug`` (or, for :func:`blocked_monitor_ids` and :func:`no_session`, at
session start and when no session matches). Standard library only.
"""

from __future__ import annotations

import sys

from agentmonitors.daemon.client import DaemonConnectionError, DaemonError, call
from agentmonitors.delivery.text import MAX_ADDITIONAL_CONTEXT, untrusted_field

# ``typing`` stays out of the run-time imports: the hook path pays for each one.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from agentmonitors.delivery.wire import RenderedReply, SessionRecord


def field(value: str | None) -> str:
    """An untrusted payload field for a stderr line; ``(none)`` when absent."""
    return "(none)" if value is None else untrusted_field(value)


def debug_session(
    reply: RenderedReply,
    session: SessionRecord,
    channel_delivery_ids: tuple[str, ...],
    debug: Callable[[str], None],
) -> None:
    if channel_delivery_ids:
        debug(f"channel deliveries confirmed: {list(reply.get('confirmedDeliveryIds') or [])}")
    debug(
        f"session {field(session['id'])} ({session.get('role', 'lead')}, {session.get('status')})"
    )


def debug_reply(
    ipc: Callable[[str, dict[str, Any]], Any],
    session_id: str,
    reply: RenderedReply,
    debug: Callable[[str], None],
    reported: set[str],
) -> None:
    reservation = reply.get("reservation")
    claim: Any = reservation["claim"] if reservation is not None else {}
    _debug_claim(claim, reply, debug)
    # The diagnosis sized the cap as this delivery did; measure here only when the
    # reservation deferred what the diagnosis did not foresee (a race, a forced fit).
    if reply.get("moreDeferred") and "deferred-by-cap" not in reported:
        _debug_deferred(ipc, session_id, claim, debug)


def debug_before_reserving(
    socket: str, host_session_id: str, lifecycle: str, debug: Callable[[str], None]
) -> set[str] | None:
    """Diagnose before reserving, so the report shows what the reservation sees.

    The hold reasons named, or None when there is no session to deliver to.
    """
    session = _find_session(socket, host_session_id, debug)
    if session is None:
        return None
    reported = _debug_diagnosis(socket, str(session["id"]), lifecycle, debug)
    _debug_pacing(socket, str(session["id"]), debug)
    waiting = blocked_monitor_ids(socket)
    if waiting:
        debug(f"blocked: awaiting-approval (never run until the user approves): {waiting}")
    return reported


def blocked_monitor_ids(socket: str) -> list[str]:
    """Ids of the monitors that wait for the user's approval; [] from an older daemon."""
    try:
        reply = call(socket, "monitor.blocked", {})
    except DaemonError:
        return []
    rows = reply.get("blocked") if isinstance(reply, dict) else None
    # Ids come from a repository's folder names and reach the agent's context: only
    # plain ids pass, so a folder name cannot smuggle instructions in.
    return [
        row["monitorId"]
        for row in rows or []
        if isinstance(row, dict) and _plain_id(row.get("monitorId"))
    ]


def _plain_id(value: object) -> bool:
    return (
        isinstance(value, str)
        and 0 < len(value) <= 64
        and all(char.isascii() and (char.isalnum() or char in "-_.") for char in value)
    )


def _debug_claim(claim: Any, reply: RenderedReply, debug: Callable[[str], None]) -> None:
    # Lazy: every session start loads this module; only --debug prints a claim's JSON.
    import json

    debug(
        f"claim: {claim.get('mode')} {claim.get('urgency', '')} with "
        f"{len(claim.get('events') or [])} event(s); shown {list(reply.get('shownEventIds') or [])}"
    )
    debug("claim json " + json.dumps(claim, sort_keys=True, ensure_ascii=False))


def _debug_deferred(
    ipc: Callable[[str, dict[str, Any]], Any],
    session_id: str,
    claim: dict[str, Any],
    debug: Callable[[str], None],
) -> None:
    """Name the settled events the context cap left out.

    Asked while the reservation still leases what it shows, so the preview holds
    exactly the settled rows that did not fit.
    """
    try:
        left = ipc("hook.preview", {"sessionId": session_id})
    except Exception:  # the delivery matters more than this line
        left = None
    deferred = len(left) if isinstance(left, list) else 0
    shown = len(claim.get("events") or [])
    count = f"{deferred} of {deferred + shown}" if deferred else "some"
    debug(
        f"held (high, deferred-by-cap): {count} settled high-urgency event(s) deferred by "
        f"the {MAX_ADDITIONAL_CONTEXT}-char context cap; they stay pending and surface at "
        "the next prompt or tool call"
    )


def no_session(host_session_id: str) -> None:
    sys.stderr.write(
        "hook deliver: no session registered for host session id "
        f"{untrusted_field(host_session_id)}\n"
    )


def _debug_pacing(socket: str, session_id: str, debug: Callable[[str], None]) -> None:
    """The holds before an event exists: each monitor whose notify pacing (debounce,
    rollup, throttle) keeps observations back from this session right now."""
    try:
        reply = call(socket, "monitor.pacing", {"sessionId": session_id})
    except DaemonError as error:  # an older daemon has no such method
        debug(f"pacing holds unavailable: {error}")
        return
    holds = reply.get("holds") if isinstance(reply, dict) else None
    rows = [hold for hold in holds or [] if isinstance(hold, dict)]
    if not rows:
        debug("no monitor's notify pacing holds an observation back right now")
    for hold in rows:
        kind = hold.get("kind")
        # Held observations become one event when the hold ends; throttled ones never do.
        after = " No event exists until then." if kind in ("debounce", "rollup") else ""
        debug(
            f"held (pacing, {kind}): monitor {field(str(hold.get('monitorId')))}:"
            f" {hold.get('reason', '')}{after}"
        )


def _find_session(
    socket: str, host_session_id: str, debug: Callable[[str], None]
) -> dict[str, Any] | None:
    try:
        sessions = call(socket, "session.list", {})
    except DaemonConnectionError as error:
        debug(f"stopped: daemon unreachable ({error})")
        return None
    session = next(
        (
            item
            for item in sessions or []
            if isinstance(item, dict) and item.get("hostSessionId") == host_session_id
        ),
        None,
    )
    if session is None:
        no_session(host_session_id)
    return session


def _debug_diagnosis(
    socket: str, session_id: str, lifecycle: str, debug: Callable[[str], None]
) -> set[str]:
    """The daemon's hold diagnosis (the one ``monitor explain`` shows), line by line.

    The socket is passed so the diagnosis sizes a delivery as this hook will, which
    is what lets it name ``deferred-by-cap`` before anything is reserved.
    """
    request = {"sessionId": session_id, "lifecycle": lifecycle, "socketPath": socket}
    try:
        report = call(socket, "hook.diagnose", request)
    except DaemonError as error:
        debug(f"diagnosis unavailable: {error}")
        return set()
    if not isinstance(report, dict):
        return set()
    counts = report.get("unreadCounts") or {}
    debug(
        "unread "
        + ", ".join(f"{band}={counts.get(band, 0)}" for band in ("high", "normal", "low", "total"))
    )
    holds = [hold for hold in report.get("holds") or [] if isinstance(hold, dict)]
    if not holds:
        debug("no stored event is held for this lifecycle right now")
    for hold in holds:
        debug(f"held ({hold.get('urgency')}, {hold.get('reason')}): {hold.get('message', '')}")
    return {str(hold.get("reason")) for hold in holds}
