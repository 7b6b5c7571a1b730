"""One session's delivery at a hook: reserve, render, write, commit.

``hook deliver`` (``transports/deliver.py``) and ``session start``'s recap load this
only once the project is enabled and a daemon answers for it, so a hook in a project
that is not enabled never imports the daemon client (docs/architecture.md "Speed").
"""

from __future__ import annotations

from agentmonitors.daemon.client import (
    DaemonConnectionError,
    DaemonUnsupportedError,
    call,
)
from agentmonitors.delivery.heartbeats import write_heartbeat
from agentmonitors.transports.deliver import _quiet, _write
from agentmonitors.transports.handoff import COMMITTED, NOTHING, UNWRITTEN, hand_off
from agentmonitors.transports.hosts.claude_code import ADAPTER as CLAUDE_CODE

# ``typing`` stays out of the run-time imports: the hook path pays for each one.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from agentmonitors.delivery.wire import RenderedReply
    from agentmonitors.transports.hosts.base import HostAdapter


def deliver_to_session(
    socket: str,
    host_session_id: str,
    lifecycle: str,
    *,
    event_name: str | None,
    workspace: str,
    output_format: str,
    debug: Callable[[str], None],
    channel_delivery_ids: tuple[str, ...] = (),
    preface: str = "",
    adapter: HostAdapter = CLAUDE_CODE,
) -> bool:
    """Reserve, render, write, then commit (release when the write fails).

    Shared by ``hook deliver`` and ``session start``'s recap, so the two can never
    disagree about what was shown and what was claimed: one request finds the session
    and reserves a rendered delivery, and :func:`~agentmonitors.transports.handoff.hand_off`
    writes and commits it.
    """
    debugging = debug is not _quiet
    reported: set[str] = set()  # hold reasons the diagnosis already named
    if debugging:
        # Lazy: the debug steps load only under --debug (and at a session start).
        from agentmonitors.transports.deliver_debug import (
            debug_before_reserving,
            debug_reply,
            debug_session,
        )

        found = debug_before_reserving(socket, host_session_id, lifecycle, debug)
        if found is None:
            return False
        reported = found
    reply = _reserve(socket, host_session_id, lifecycle, channel_delivery_ids, debug)
    if reply is None:
        return False
    session = reply.get("session")
    if session is None:
        # Lazy: an unknown session is rare; its advice lives with the debug text.
        from agentmonitors.transports.deliver_debug import no_session

        no_session(host_session_id)
        return False
    if debugging:
        debug_session(reply, session, channel_delivery_ids, debug)
    _heartbeat(socket, host_session_id, session["id"], workspace, delivered=False)

    def ipc(method: str, params: dict[str, Any]) -> Any:
        return call(socket, method, params)

    if debugging and reply.get("reservation") is not None and reply.get("text"):
        debug_reply(ipc, session["id"], reply, debug, reported)

    def write(text: str) -> bool:
        return _write(
            preface + "\n\n" + text if preface else text,
            event_name,
            output_format,
            debug,
            adapter,
        )

    outcome = hand_off(ipc, reply, write)
    if outcome == NOTHING:
        debug(
            "claim: null — nothing to deliver at this lifecycle right now (see the hold "
            "reasons above, if any)"
        )
        return bool(preface) and _write(preface, event_name, output_format, _quiet, adapter)
    if outcome == UNWRITTEN:
        return False
    debug("emitted; commit " + ("landed" if outcome == COMMITTED else "lapsed (rows stay pending)"))
    _heartbeat(socket, host_session_id, session["id"], workspace, delivered=True)
    return True


def _reserve(
    socket: str,
    host_session_id: str,
    lifecycle: str,
    channel_delivery_ids: tuple[str, ...],
    debug: Callable[[str], None],
) -> RenderedReply | None:
    """``delivery.reserveRendered`` for the hook; None (said on the debug channel) when
    there is no answer."""
    request: dict[str, Any] = {
        "transport": "hook",
        "hostSessionId": host_session_id,
        "lifecycle": lifecycle,
        "socketPath": socket,
    }
    if channel_delivery_ids:
        # This turn is a channel push the host showed: that proves its delivery.
        request["channelDeliveryIds"] = list(channel_delivery_ids)
        debug(f"channel turn: delivery ids {list(channel_delivery_ids)}")
    try:
        # The daemon's own shape (delivery/wire.py), checked where it is read.
        reply: RenderedReply | None = call(socket, "delivery.reserveRendered", request)
    except DaemonConnectionError as error:
        debug(f"stopped: daemon unreachable ({error})")
        return None
    except DaemonUnsupportedError:
        # Hooks and daemon come from one install, so only a daemon left running across
        # an upgrade answers this: nothing is delivered until it is restarted.
        debug(
            "stopped: the daemon predates delivery.reserveRendered (left running across an "
            "upgrade?); restart it with `agentmonitors daemon stop` then a new session"
        )
        return None
    return reply if isinstance(reply, dict) else None


def _heartbeat(
    socket: str, host_session_id: str, session_id: str, workspace: str, *, delivered: bool
) -> None:
    write_heartbeat(
        "hook",
        host_session_id,
        workspace=workspace,
        socket_path=socket,
        host_session_id=host_session_id,
        session_id=session_id,
        delivered=delivered,
        refresh_while_fresh=False,
    )
