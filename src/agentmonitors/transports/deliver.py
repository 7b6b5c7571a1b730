"""``hook deliver``: hand pending deliveries to the agent at a host's hook.

The host (``--host``, Claude Code by default) decides the payload and the output
shapes through its adapter (``transports/hosts``); this module knows neither.
This runs on every prompt, after every tool call and at every stop, so it stays on
the standard library and prints nothing to stdout unless it has a delivery. Any
failure ends quietly with exit code 0: a hook must never break the user's prompt, and
input it cannot use (garbage, empty, an event it does not serve) is explained only
under ``--debug``.
``--debug`` explains each step on stderr and leaves stdout byte-identical.
"""

from __future__ import annotations

import sys

from agentmonitors.delivery.vocabulary import LIFECYCLES
from agentmonitors.fastpath.argv import FLAG, VALUE, Spec, parse_strict
from agentmonitors.transports.hosts import DEFAULT_HOST, HOSTS, adapter_for
from agentmonitors.transports.hosts.claude_code import ADAPTER as CLAUDE_CODE

# ``typing`` stays out of the run-time imports: the hook path pays for each one.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from agentmonitors.delivery.wire import RenderedReply
    from agentmonitors.transports.hosts.base import HookPayload, HostAdapter

DEBUG_PREFIX = "agentmonitors hook deliver --debug: "
NO_SESSION_WARNING = (
    "hook deliver: no session_id in the stdin payload — expected a Claude Code hook JSON "
    "payload on stdin; nothing delivered."
)
NO_SOCKET_WARNING = (
    "hook deliver: no per-workspace socket configured (neither --socket nor a `socket:` "
    "entry in .claude/agentmonitors.local.md) — refusing to fall back to a shared default "
    "socket; nothing delivered. Start a daemon for this workspace with `agentmonitors daemon "
    "run --detach`, or pass --socket."
)
BOOT_FAILED_WARNING = (
    "hook deliver: no per-workspace socket configured — the last automatic daemon boot for "
    "this workspace (via the SessionStart hook) failed to come up in time; nothing "
    "delivered. It will retry automatically the next time a session starts here — run "
    "`agentmonitors daemon run --detach` yourself only if you need it available before then."
)


def _field(value: str | None) -> str:
    from agentmonitors.transports.deliver_debug import field

    return field(value)


class DeliverOptions:
    __slots__ = ("debug", "host", "lifecycle", "output_format", "socket")

    def __init__(
        self,
        lifecycle: str | None = None,
        output_format: str = "json",
        socket: str | None = None,
        debug: bool = False,
        host: str = DEFAULT_HOST,
    ) -> None:
        self.lifecycle = lifecycle
        self.output_format = output_format
        self.socket = socket
        self.debug = debug
        self.host = host


# Kept equal to the click declaration by tests/fastpath/test_argv.py.
DELIVER_OPTIONS: Spec = {
    "--lifecycle": ("lifecycle", VALUE, LIFECYCLES),
    "--format": ("output_format", VALUE, ("json", "text")),
    "--socket": ("socket", VALUE, None),
    "--debug": ("debug", FLAG, None),
    "--host": ("host", VALUE, HOSTS),
}


def parse_deliver_args(args: list[str]) -> DeliverOptions | str:
    """Flags of ``hook deliver``; a string is the usage error."""
    parsed = parse_strict(DELIVER_OPTIONS, args)
    return parsed if isinstance(parsed, str) else DeliverOptions(**parsed)


def run_hook_deliver(args: list[str]) -> int:
    """Entry point of ``agentmonitors hook deliver``; always returns 0."""
    parsed = parse_deliver_args(args)
    if isinstance(parsed, str):
        sys.stderr.write(f"error: {parsed}\n")
        return 0
    debug: Callable[[str], None] = _to_stderr if parsed.debug else _quiet
    adapter = adapter_for(parsed.host)
    _WRITES.clear()
    try:
        deliver(adapter.read(), parsed, debug, adapter)
    except Exception as error:  # a hook never breaks the prompt
        debug(f"swallowed error: {type(error).__name__}: {error}")
    say_nothing(adapter, parsed.output_format)
    return 0


_WRITES: list[str] = []
"""What this process printed for the host: a hook runs once per process."""


def say_nothing(adapter: HostAdapter, output_format: str = "json") -> None:
    """Print the host's "nothing" when this process printed no delivery.

    Claude Code's and Codex's is empty; Cursor's is ``{}``.
    """
    if _WRITES or not adapter.nothing or output_format == "text":
        return
    try:
        sys.stdout.write(adapter.nothing)
        sys.stdout.flush()
    except Exception:  # a closed stdout: the host sees nothing, which is the same
        return


def _quiet(line: str) -> None:
    del line


def _to_stderr(line: str) -> None:
    sys.stderr.write(DEBUG_PREFIX + line + "\n")


def deliver(
    payload: HookPayload,
    options: DeliverOptions,
    debug: Callable[[str], None],
    adapter: HostAdapter = CLAUDE_CODE,
) -> bool:
    """Run the delivery steps; True when something was written to stdout."""
    debugging = debug is not _quiet
    if debugging:  # formatting untrusted fields costs an import: only when asked
        debug(
            f"payload session_id={_field(payload.session_id)} "
            f"hook_event_name={_field(payload.hook_event_name)} cwd={_field(payload.cwd)}"
        )
    # Bad input is not the user's prompt's business: its reason is said under --debug
    # only (the hook contract, docs/cli.md "Hooks").
    if payload.session_id is None:
        debug(_w1(adapter).removeprefix("hook deliver: "))
        return False
    lifecycles = adapter.lifecycles(payload, options.lifecycle)
    if not lifecycles:
        if payload.hook_event_name == adapter.stop_event and payload.stop_guard:
            debug(
                f"stopped: {adapter.stop_event} hook already active, so nothing is injected again"
            )
            return False
        if debugging:
            debug(
                f"hook_event_name {_field(payload.hook_event_name)} does not map "
                f"to a delivery lifecycle (only {_event_names(adapter)} do); nothing delivered."
            )
        return False
    debug("lifecycle " + " then ".join(lifecycles))

    workspace, state = adapter.project(payload)
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
    if options.socket is None and state.socket is None:
        warning = BOOT_FAILED_WARNING if state.last_boot_failure_at else NO_SOCKET_WARNING
        sys.stderr.write(warning + "\n")
        return False
    from agentmonitors.paths import fit_socket_path, notice_once, workspace_socket

    if options.socket is not None:
        socket = fit_socket_path(options.socket, explicit=True)
    else:
        # The enable file may be a repository's: its `socket:` counts only when it names
        # a socket of ours; otherwise the workspace's own socket is used, said on stderr.
        socket = fit_socket_path(workspace_socket(workspace, state, notice=notice_once))
    # A host that cannot reach a lifecycle tries it at the next point it does reach:
    # what was held for it is delivered first, the point's own lifecycle after.
    return any(
        deliver_to_session(
            socket,
            payload.session_id,
            lifecycle,
            event_name=payload.hook_event_name,
            workspace=workspace,
            output_format=options.output_format,
            debug=debug,
            channel_delivery_ids=payload.channel_delivery_ids,
            adapter=adapter,
        )
        for lifecycle in lifecycles
    )


def _w1(adapter: HostAdapter) -> str:
    if adapter is CLAUDE_CODE:
        return NO_SESSION_WARNING
    return NO_SESSION_WARNING.replace("a Claude Code hook", f"a {adapter.title} hook")


def _event_names(adapter: HostAdapter) -> str:
    names = list(adapter.events)
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else "".join(names)


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
    from agentmonitors.daemon.client import call
    from agentmonitors.transports.handoff import COMMITTED, NOTHING, UNWRITTEN, hand_off

    debugging = debug is not _quiet
    reported: set[str] = set()  # hold reasons the diagnosis already named
    if debugging:
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
    from agentmonitors.daemon.client import DaemonConnectionError, DaemonUnsupportedError, call

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


def _write(
    text: str,
    event_name: str | None,
    output_format: str,
    debug: Callable[[str], None],
    adapter: HostAdapter = CLAUDE_CODE,
) -> bool:
    """Print a delivery where the host reads it; False when stdout is gone."""
    output = text if output_format == "text" else adapter.output(event_name, text)
    try:
        sys.stdout.write(output)
        sys.stdout.flush()
    except Exception as error:  # a closed or broken stdout: nothing reached the host
        debug(f"write failed ({error}); releasing the reservation")
        return False
    _WRITES.append(output)
    return True


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
        refresh_while_fresh=False,
    )
