"""``hook deliver``: hand pending deliveries to Claude Code at a hook.

This runs on every prompt, after every tool call and at every stop, so it stays on
the standard library and prints nothing to stdout unless it has a delivery. Any
failure ends quietly with exit code 0: a hook must never break the user's prompt.
``--debug`` explains each step on stderr and leaves stdout byte-identical.
"""

from __future__ import annotations

import sys

from agentmonitors.delivery.vocabulary import LIFECYCLES
from agentmonitors.transports.claude_code import (
    HookPayload,
    hook_output,
    lifecycle_for,
    payload_project,
    read_payload,
)

# ``typing`` stays out of the run-time imports: the hook path pays for each one.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from agentmonitors.delivery.wire import RenderedReply, SessionRecord

DEBUG_PREFIX = "agentmonitors hook deliver --debug: "
W1 = (
    "hook deliver: no session_id in the stdin payload — expected a Claude Code hook JSON "
    "payload on stdin; nothing delivered."
)
W3A = (
    "hook deliver: no per-workspace socket configured (neither --socket nor a `socket:` "
    "entry in .claude/agentmonitors.local.md) — refusing to fall back to a shared default "
    "socket; nothing delivered. Start a daemon for this workspace with `agentmonitors daemon "
    "run --detach`, or pass --socket."
)
W3B = (
    "hook deliver: no per-workspace socket configured — the last automatic daemon boot for "
    "this workspace (via the SessionStart hook) failed to come up in time; nothing "
    "delivered. It will retry automatically the next time a session starts here — run "
    "`agentmonitors daemon run --detach` yourself only if you need it available before then."
)


def _field(value: str | None) -> str:
    from agentmonitors.delivery.text import untrusted_field

    return "(none)" if value is None else untrusted_field(value)


class DeliverOptions:
    __slots__ = ("debug", "lifecycle", "output_format", "socket")

    def __init__(
        self,
        lifecycle: str | None = None,
        output_format: str = "json",
        socket: str | None = None,
        debug: bool = False,
    ) -> None:
        self.lifecycle = lifecycle
        self.output_format = output_format
        self.socket = socket
        self.debug = debug


def parse_deliver_args(args: list[str]) -> DeliverOptions | str:
    """Flags of ``hook deliver``; a string is the usage error."""
    options = DeliverOptions()
    index = 0
    while index < len(args):
        arg = args[index]
        name, has_value, value = arg.partition("=")
        if name in ("--lifecycle", "--format", "--socket"):
            if not has_value:
                index += 1
                if index >= len(args):
                    return f"Option '{name}' requires an argument."
                value = args[index]
            if name == "--lifecycle":
                if value not in LIFECYCLES:
                    return f"Invalid value for '--lifecycle': {value!r} is not one of " + (
                        ", ".join(repr(item) for item in LIFECYCLES) + "."
                    )
                options.lifecycle = value
            elif name == "--format":
                if value not in ("json", "text"):
                    return f"Invalid value for '--format': {value!r} is not one of 'json', 'text'."
                options.output_format = value
            else:
                options.socket = value
        elif arg == "--debug":
            options.debug = True
        else:
            return f"No such option: {arg}"
        index += 1
    return options


def run_hook_deliver(args: list[str]) -> int:
    """Entry point of ``agentmonitors hook deliver``; always returns 0."""
    parsed = parse_deliver_args(args)
    if isinstance(parsed, str):
        sys.stderr.write(f"error: {parsed}\n")
        return 0
    debug: Callable[[str], None] = _to_stderr if parsed.debug else _quiet
    try:
        deliver(read_payload(), parsed, debug)
    except Exception as error:  # a hook never breaks the prompt
        debug(f"swallowed error: {type(error).__name__}: {error}")
    return 0


def _quiet(line: str) -> None:
    del line


def _to_stderr(line: str) -> None:
    sys.stderr.write(DEBUG_PREFIX + line + "\n")


def deliver(payload: HookPayload, options: DeliverOptions, debug: Callable[[str], None]) -> bool:
    """Run the delivery steps; True when something was written to stdout."""
    debugging = debug is not _quiet
    if debugging:  # formatting untrusted fields costs an import: only when asked
        debug(
            f"payload session_id={_field(payload.session_id)} "
            f"hook_event_name={_field(payload.hook_event_name)} cwd={_field(payload.cwd)}"
        )
    if payload.session_id is None:
        sys.stderr.write(W1 + "\n")
        return False
    lifecycle = lifecycle_for(payload, options.lifecycle)
    if lifecycle is None:
        if payload.hook_event_name == "Stop" and payload.stop_hook_active:
            debug("stopped: Stop hook already active, so nothing is injected again")
            return False
        sys.stderr.write(
            f"hook deliver: hook_event_name {_field(payload.hook_event_name)} does not map to a "
            "delivery lifecycle (only UserPromptSubmit, PostToolUse, Stop and SessionStart "
            "do); nothing delivered.\n"
        )
        return False
    debug(f"lifecycle {lifecycle}")

    workspace, state = payload_project(payload)
    if not state.enabled:
        if debugging:
            debug(
                f"stopped: monitoring is not enabled in {_field(workspace)} or any folder "
                "above it (nor under $CLAUDE_PROJECT_DIR); run `agentmonitors init "
                "--enable-only` in the project to enable it"
            )
        return False
    if debugging:
        debug(f"workspace {_field(workspace)} (enabled, socket {state.socket or '(none)'})")
    socket = options.socket or state.socket
    if socket is None:
        sys.stderr.write((W3B if state.last_boot_failure_at else W3A) + "\n")
        return False
    from agentmonitors.paths import fit_socket_path

    socket = fit_socket_path(socket, explicit=options.socket is not None)
    return deliver_to_session(
        socket,
        payload.session_id,
        lifecycle,
        event_name=payload.hook_event_name,
        workspace=workspace,
        output_format=options.output_format,
        debug=debug,
        channel_delivery_ids=payload.channel_delivery_ids,
    )


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
) -> bool:
    """Reserve, render, write, then commit (release when the write fails).

    Shared by ``hook deliver`` and ``session start``'s recap, so the two can never
    disagree about what was shown and what was claimed: one request finds the session
    and reserves a rendered delivery, and :func:`~agentmonitors.transports.handoff.hand_off`
    writes and commits it.
    """
    from agentmonitors.daemon.client import call
    from agentmonitors.transports.handoff import COMMITTED, NOTHING, UNWRITTEN, hand_off

    debugging = debug is not _quiet
    reported: set[str] = set()  # hold reasons the diagnosis already named
    if debugging:
        found = _debug_before_reserving(socket, host_session_id, lifecycle, debug)
        if found is None:
            return False
        reported = found
    reply = _reserve(socket, host_session_id, lifecycle, channel_delivery_ids, debug)
    if reply is None:
        return False
    session = reply.get("session")
    if session is None:
        _no_session(host_session_id)
        return False
    if debugging:
        _debug_session(reply, session, channel_delivery_ids, debug)
    _heartbeat(socket, host_session_id, session["id"], workspace, delivered=False)

    def ipc(method: str, params: dict[str, Any]) -> Any:
        return call(socket, method, params)

    if debugging and reply.get("reservation") is not None and reply.get("text"):
        _debug_reply(ipc, session["id"], reply, debug, reported)

    def write(text: str) -> bool:
        return _write(
            preface + "\n\n" + text if preface else text, event_name, output_format, debug
        )

    outcome = hand_off(ipc, reply, write)
    if outcome == NOTHING:
        debug(
            "claim: null — nothing to deliver at this lifecycle right now (see the hold "
            "reasons above, if any)"
        )
        return bool(preface) and _write(preface, event_name, output_format, _quiet)
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
    """``hook.reserveRendered``; None (said on the debug channel) when there is no answer."""
    from agentmonitors.daemon.client import DaemonConnectionError, DaemonUnsupportedError, call

    request: dict[str, Any] = {
        "hostSessionId": host_session_id,
        "lifecycle": lifecycle,
        "socketPath": socket,
        "packer": "hook",
    }
    if channel_delivery_ids:
        # This turn is a channel push the host showed: that proves its delivery.
        request["channelDeliveryIds"] = list(channel_delivery_ids)
        debug(f"channel turn: delivery ids {list(channel_delivery_ids)}")
    try:
        # The daemon's own shape (delivery/wire.py), checked where it is read.
        reply: RenderedReply | None = call(socket, "hook.reserveRendered", request)
    except DaemonConnectionError as error:
        debug(f"stopped: daemon unreachable ({error})")
        return None
    except DaemonUnsupportedError:
        # Hooks and daemon come from one install, so only a daemon left running across
        # an upgrade answers this: nothing is delivered until it is restarted.
        debug(
            "stopped: the daemon predates hook.reserveRendered (left running across an "
            "upgrade?); restart it with `agentmonitors daemon stop` then a new session"
        )
        return None
    return reply if isinstance(reply, dict) else None


def _write(
    text: str, event_name: str | None, output_format: str, debug: Callable[[str], None]
) -> bool:
    """Print a delivery where Claude Code reads it; False when stdout is gone."""
    output = text if output_format == "text" else hook_output(event_name, text)
    try:
        sys.stdout.write(output)
        sys.stdout.flush()
    except Exception as error:  # a closed or broken stdout: nothing reached the host
        debug(f"write failed ({error}); releasing the reservation")
        return False
    return True


def _debug_session(
    reply: RenderedReply,
    session: SessionRecord,
    channel_delivery_ids: tuple[str, ...],
    debug: Callable[[str], None],
) -> None:
    if channel_delivery_ids:
        debug(f"channel deliveries confirmed: {list(reply.get('confirmedDeliveryIds') or [])}")
    debug(
        f"session {_field(session['id'])} ({session.get('role', 'lead')}, {session.get('status')})"
    )


def _debug_reply(
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


def _debug_before_reserving(
    socket: str, host_session_id: str, lifecycle: str, debug: Callable[[str], None]
) -> set[str] | None:
    """Diagnose before reserving, so the report shows what the reservation sees.

    The hold reasons named, or None when there is no session to deliver to.
    """
    session = _find_session(socket, host_session_id, debug)
    if session is None:
        return None
    reported = _debug_diagnosis(socket, str(session["id"]), lifecycle, debug)
    waiting = blocked_monitor_ids(socket)
    if waiting:
        debug(f"blocked: awaiting-approval (never run until the user approves): {waiting}")
    return reported


def blocked_monitor_ids(socket: str) -> list[str]:
    """Ids of the monitors that wait for the user's approval; [] from an older daemon."""
    from agentmonitors.daemon.client import DaemonError, call

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
    from agentmonitors.delivery.text import MAX_ADDITIONAL_CONTEXT

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


def _heartbeat(
    socket: str, host_session_id: str, session_id: str, workspace: str, *, delivered: bool
) -> None:
    from agentmonitors.delivery.heartbeats import write_heartbeat

    write_heartbeat(
        "hook",
        host_session_id,
        workspace=workspace,
        socket_path=socket,
        host_session_id=host_session_id,
        session_id=session_id,
        delivered=delivered,
    )


def _no_session(host_session_id: str) -> None:
    from agentmonitors.delivery.text import untrusted_field

    sys.stderr.write(
        "hook deliver: no session registered for host session id "
        f"{untrusted_field(host_session_id)}\n"
    )


def _find_session(
    socket: str, host_session_id: str, debug: Callable[[str], None]
) -> dict[str, Any] | None:
    from agentmonitors.daemon.client import DaemonConnectionError, call

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
        _no_session(host_session_id)
    return session


def _debug_diagnosis(
    socket: str, session_id: str, lifecycle: str, debug: Callable[[str], None]
) -> set[str]:
    """The daemon's hold diagnosis (the one ``monitor explain`` shows), line by line.

    The socket is passed so the diagnosis sizes a delivery as this hook will, which
    is what lets it name ``deferred-by-cap`` before anything is reserved.
    """
    from agentmonitors.daemon.client import DaemonError, call

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
        debug("no held events for this lifecycle right now")
    for hold in holds:
        debug(f"held ({hold.get('urgency')}, {hold.get('reason')}): {hold.get('message', '')}")
    return {str(hold.get("reason")) for hold in holds}
