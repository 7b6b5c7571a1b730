"""``channel serve``: the optional MCP channel that pushes deliveries into a Claude Code session.

A stdio MCP server on the official SDK's 1.x low-level session (its high-level server
cannot declare the ``claude/channel`` capability). It binds to the Claude Code session
named by ``CLAUDE_CODE_SESSION_ID`` in an enabled workspace, polls the daemon, and pushes
each delivery as ``notifications/claude/channel``. It never decides anything: the daemon
sizes, reserves and renders (``delivery.reserveRendered``), and the push is committed only
on proof that the host showed it (see ``delivery/pushes.py``). ``agentmon_ack`` acknowledges
through the bound session. stdout carries JSON-RPC only; diagnostics go to stderr.

Claude Code first asks ``server/discover`` and accepts channels only from a server that
answers "method not found" and then meets it on ``initialize``; every request method the
SDK does not know is answered that way here, whatever the SDK version would say.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import signal
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, get_args

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import types
from mcp.server.models import InitializationOptions
from mcp.server.session import ServerSession
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.shared.session import RequestResponder

from agentmonitors import __version__
from agentmonitors.daemon.client import call as daemon_call
from agentmonitors.delivery.heartbeats import CHANNEL_TTL_MS, remove_heartbeat, write_heartbeat
from agentmonitors.transports.channel_ack import ack_summary
from agentmonitors.transports.channel_options import ChannelOptions
from agentmonitors.transports.claude_code import ADAPTER, CHANNEL_CAPABILITY, CHANNEL_NOTIFICATION
from agentmonitors.transports.handoff import COMMITTED, LAPSED, hand_off

if TYPE_CHECKING:
    from agentmonitors.delivery.wire import RenderedReply

SERVER_NAME = "agentmonitors"
ACK_TOOL = "agentmon_ack"
# How long requests in flight when stdin closes may take to be answered.
DRAIN_S = 10.0

LEASED_EXCEPTION = (
    "except any rows still leased by an in-flight delivery push, which stay unread until "
    "that push resolves"
)
INSTRUCTIONS = (
    'AgentMon delivers monitor events here as <channel source="agentmonitors" ...>. Read each '
    "one and act on the work it describes. The tag meta carries urgency, event_count, and (for "
    "a single event) monitor_id and event_id. When you have handled events, call the "
    "agentmon_ack tool with their event_id values (or no arguments to acknowledge all unread, "
    f"{LEASED_EXCEPTION})."
)
ACK_DESCRIPTION = (
    "Acknowledge AgentMon events surfaced in this session. Pass the event_id values from the "
    '<channel event_id="..."> tags; omit event_ids to acknowledge all unread events, '
    f"{LEASED_EXCEPTION}."
)
ACK_INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "event_ids": {
            "type": "array",
            "items": {"type": "string"},
            "description": 'Event IDs from the <channel event_id="..."> tags. Omit to '
            f"acknowledge all unread, {LEASED_EXCEPTION}.",
        }
    },
}
NO_SESSION_NOTICE = (
    "agentmonitors channel: no CLAUDE_CODE_SESSION_ID available; not binding to a session."
)


class ChannelNotification(
    types.Notification[dict[str, Any], Literal["notifications/claude/channel"]]
):
    """Claude Code's channel push: ``params = {content, meta}``."""


def _known_request_methods() -> frozenset[str]:
    methods: set[str] = set()
    for model in get_args(types.ClientRequestType):
        annotation = model.model_fields["method"].annotation
        methods.update(str(value) for value in get_args(annotation))
    return frozenset(methods)


KNOWN_REQUEST_METHODS = _known_request_methods()


def _text_result(text: str, *, error: bool = False) -> types.ServerResult:
    return types.ServerResult(
        types.CallToolResult(content=[types.TextContent(type="text", text=text)], isError=error)
    )


class ChannelServer:
    """One MCP connection: requests, the push loop and the heartbeat."""

    def __init__(
        self,
        options: ChannelOptions,
        *,
        call: Callable[[str, str, dict[str, Any]], Any] | None = None,
        log: Callable[[str], None] | None = None,
        debug: bool = False,
    ) -> None:
        self.options = options
        self._call = call or daemon_call
        self._log = log or (lambda line: print(line, file=sys.stderr, flush=True))
        self._session_id: str | None = None
        self._session: ServerSession | None = None
        self._initialized = anyio.Event()
        self._shutting_down = False
        self._key = options.host_session_id or f"pid-{os.getpid()}"
        self._debug = debug
        # Requests handed to the session that `_answer` has yet to answer; when the
        # input ends they drain before the session closes its output.
        self._in_flight = 0

    def debug(self, line: str) -> None:
        if self._debug:
            self._log(f"agentmonitors channel serve --debug: {line}")

    # ------------------------------------------------------------------ daemon

    def ipc(self, method: str, params: dict[str, Any]) -> Any:
        return self._call(self.options.socket_path, method, params)

    def bind(self) -> str | None:
        """The AgentMon session of this Claude Code session (opened idempotently)."""
        if self._session_id is not None:
            return self._session_id
        if not self.options.enabled or not self.options.host_session_id:
            return None
        session = self.ipc(
            "session.open",
            {
                "adapter": ADAPTER,
                "hostSessionId": self.options.host_session_id,
                "workspacePath": self.options.workspace,
            },
        )
        self._session_id = str(session["id"])
        return self._session_id

    def _heartbeat(self, *, delivered: bool = False) -> None:
        if self._shutting_down:
            return  # a late write must not recreate the record removed on exit

        write_heartbeat(
            "channel",
            self._key,
            workspace=self.options.workspace,
            socket_path=self.options.socket_path,
            host_session_id=self.options.host_session_id,
            session_id=self._session_id,
            ttl_ms=CHANNEL_TTL_MS,
            delivered=delivered,
        )

    # ------------------------------------------------------------------ pushes

    async def poll_once(self) -> bool:
        """Reserve, push and report one delivery; True when a push went out."""
        session = self._session
        if session is None:
            return False
        try:
            if await anyio.to_thread.run_sync(self.bind) is None:
                return False
            reply = await anyio.to_thread.run_sync(
                self.ipc,
                "delivery.reserveRendered",
                {
                    "transport": "channel",
                    "hostSessionId": self.options.host_session_id,
                    "socketPath": self.options.socket_path,
                },
            )
        except Exception as error:
            self._session_id = None  # re-bind next time: the daemon may have restarted
            self.debug(f"poll failed: {error}")
            return False
        if isinstance(reply, dict) and reply.get("reservation") is None and reply.get("held"):
            self.debug(f"held: {reply['held']}")

        def write(content: str) -> bool:
            pushed: bool = anyio.from_thread.run(self._push, content, reply)
            return pushed

        outcome = await anyio.to_thread.run_sync(
            functools.partial(hand_off, self.ipc, reply, write, commit=self._sent)
        )
        if outcome not in (COMMITTED, LAPSED):
            return False
        await anyio.to_thread.run_sync(lambda: self._heartbeat(delivered=True))
        return True

    async def _push(self, content: str, reply: RenderedReply) -> bool:
        """Send one rendered delivery to the host; False when it could not be sent."""
        session = self._session
        reservation = reply.get("reservation")
        if session is None or reservation is None:
            return False
        delivery_id = reply.get("deliveryId") or reservation["reservationId"]
        params = {"content": content, "meta": reply.get("meta") or {}}
        try:
            await session.send_notification(
                ChannelNotification(method=CHANNEL_NOTIFICATION, params=params)  # type: ignore[arg-type]
            )
        except Exception as error:
            self.debug(f"push {delivery_id} failed ({error}); released")
            return False
        if self._debug:
            claim = json.dumps(reservation["claim"], sort_keys=True, ensure_ascii=False)
            self.debug(f"pushed {delivery_id}; claim json {claim}")
        return True

    def _sent(self, delivery_id: str) -> bool:
        """A push commits only on proof the host showed it: report it sent, then wait."""
        with contextlib.suppress(Exception):
            self.ipc("channel.sent", {"deliveryId": delivery_id})
        return True

    async def _poll_loop(self) -> None:
        await self._initialized.wait()
        while True:
            await self.poll_once()
            await anyio.to_thread.run_sync(self._heartbeat)
            # Re-armed only after a poll settles: polls never overlap.
            await anyio.sleep(self.options.poll_ms / 1000)

    async def _heartbeat_loop(self) -> None:
        while True:
            await anyio.to_thread.run_sync(self._heartbeat)
            await anyio.sleep(CHANNEL_TTL_MS // 3 / 1000)

    # ------------------------------------------------------------------ the ack tool

    def acknowledge(self, arguments: Any) -> tuple[str, bool]:
        """``agentmon_ack``: ``(text, is_error)``."""
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            return "Invalid arguments: arguments must be an object", True
        event_ids = arguments.get("event_ids")
        if event_ids is not None and (
            not isinstance(event_ids, list) or not all(isinstance(item, str) for item in event_ids)
        ):
            return "Invalid arguments: event_ids must be an array of strings", True
        if event_ids == []:
            return (
                "No event ids given, so nothing was acknowledged. Pass the event_id values "
                "you handled, or omit event_ids to acknowledge all unread events, "
                f"{LEASED_EXCEPTION}.",
                False,
            )
        if not self.options.host_session_id:
            return "Acknowledge failed: no CLAUDE_CODE_SESSION_ID, so no session is bound", True
        if not self.options.enabled:
            return (
                f"Acknowledge failed: monitoring is disabled in {self.options.workspace}",
                True,
            )
        try:
            session_id = self.bind()
            assert session_id is not None
            params: dict[str, Any] = {"sessionId": session_id}
            if event_ids is not None:
                params["eventIds"] = [item.strip() for item in event_ids if item.strip()]
            # The counts come from what is unread before and after: ack-all leaves rows
            # an in-flight push leases, and the answer must say so rather than "all".
            before = self._unread_ids(session_id)
            reply = self.ipc("events.ack", params)
            after = self._unread_ids(session_id)
        except Exception as error:
            self._session_id = None
            return f"Acknowledge failed: {error}", True

        unknown = reply.get("unknownEventIds") if isinstance(reply, dict) else None
        return ack_summary(params.get("eventIds"), before, after, unknown or []), False

    def _unread_ids(self, session_id: str) -> set[str]:
        rows = self.ipc("events.list", {"sessionId": session_id, "unreadOnly": True})
        return {str(row["id"]) for row in rows or [] if isinstance(row, dict) and "id" in row}

    # ------------------------------------------------------------------ MCP plumbing

    def initialization_options(self) -> InitializationOptions:
        return InitializationOptions(
            server_name=SERVER_NAME,
            server_version=__version__,
            capabilities=types.ServerCapabilities(
                experimental={CHANNEL_CAPABILITY: {}},
                tools=types.ToolsCapability(listChanged=False),
            ),
            instructions=INSTRUCTIONS,
        )

    async def _answer(
        self, responder: RequestResponder[types.ClientRequest, types.ServerResult]
    ) -> None:
        try:
            await self._respond(responder)
        finally:
            self._in_flight -= 1

    async def _respond(
        self, responder: RequestResponder[types.ClientRequest, types.ServerResult]
    ) -> None:
        request = responder.request.root
        with responder:
            if isinstance(request, types.ListToolsRequest):
                tool = types.Tool(
                    name=ACK_TOOL, description=ACK_DESCRIPTION, inputSchema=ACK_INPUT_SCHEMA
                )
                await responder.respond(types.ServerResult(types.ListToolsResult(tools=[tool])))
            elif isinstance(request, types.CallToolRequest):
                if request.params.name != ACK_TOOL:
                    await responder.respond(
                        types.ErrorData(
                            code=types.INVALID_PARAMS,
                            message=f"Unknown tool: {request.params.name}",
                        )
                    )
                    return
                text, error = await anyio.to_thread.run_sync(
                    self.acknowledge, request.params.arguments
                )
                await responder.respond(_text_result(text, error=error))
            elif isinstance(request, types.PingRequest):
                await responder.respond(types.ServerResult(types.EmptyResult()))
            else:
                await responder.respond(
                    types.ErrorData(code=types.METHOD_NOT_FOUND, message="Method not found")
                )

    async def _filter(
        self,
        source: MemoryObjectReceiveStream[SessionMessage | Exception],
        forward: MemoryObjectSendStream[SessionMessage | Exception],
        reply: MemoryObjectSendStream[SessionMessage],
    ) -> None:
        """Answer unknown request methods (``server/discover``) with "method not found".

        When the input ends, the requests already handed on are answered before the
        session sees the end (it closes the output then).
        """
        initialized = False
        async with forward:
            async for message in source:
                root = message.message.root if isinstance(message, SessionMessage) else None
                if isinstance(root, types.JSONRPCNotification):
                    initialized = initialized or root.method == "notifications/initialized"
                if isinstance(root, types.JSONRPCRequest) and root.method not in (
                    KNOWN_REQUEST_METHODS
                ):
                    error = types.JSONRPCError(
                        jsonrpc="2.0",
                        id=root.id,
                        error=types.ErrorData(
                            code=types.METHOD_NOT_FOUND, message="Method not found"
                        ),
                    )
                    await reply.send(SessionMessage(message=types.JSONRPCMessage(error)))
                    continue
                # The session answers `initialize` itself and refuses other requests
                # before initialization; everything else reaches `_answer`.
                if isinstance(root, types.JSONRPCRequest) and (
                    root.method == "ping" or (initialized and root.method != "initialize")
                ):
                    self._in_flight += 1
                await forward.send(message)
            with anyio.move_on_after(DRAIN_S):
                while self._in_flight > 0:
                    await anyio.sleep(0.01)

    async def serve(
        self,
        read_stream: MemoryObjectReceiveStream[SessionMessage | Exception],
        write_stream: MemoryObjectSendStream[SessionMessage],
    ) -> None:
        """Serve one client until its input ends or the task is cancelled."""
        if not self.options.host_session_id:
            self._log(NO_SESSION_NOTICE)
        elif not self.options.enabled:
            self._log(
                f"agentmonitors channel: monitoring is disabled in {self.options.workspace}; "
                "not binding to a session."
            )
        forward, filtered = anyio.create_memory_object_stream[SessionMessage | Exception](16)
        try:
            async with (
                ServerSession(filtered, write_stream, self.initialization_options()) as session,
                anyio.create_task_group() as tasks,
            ):
                self._session = session
                tasks.start_soon(self._filter, read_stream, forward, write_stream)
                tasks.start_soon(self._heartbeat_loop)
                if self.options.host_session_id and self.options.enabled:
                    tasks.start_soon(self._poll_loop)
                async for message in session.incoming_messages:
                    if isinstance(message, RequestResponder):
                        tasks.start_soon(self._answer, message)
                    elif isinstance(message, types.ClientNotification) and isinstance(
                        message.root, types.InitializedNotification
                    ):
                        self._initialized.set()
                tasks.cancel_scope.cancel()
        finally:
            self.shutdown()

    def shutdown(self) -> None:
        self._shutting_down = True
        self._session = None

        remove_heartbeat("channel", self._key)


async def _until_signal(server: ChannelServer) -> None:
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for _ in signals:
            server.shutdown()
            # stdin is read by a worker thread that no cancellation reaches, so waiting
            # for the task group could block until the client writes again. Every
            # message has been written and flushed whole, and a push caught between
            # sending and reporting only keeps its lease until it lapses: leave now.
            with contextlib.suppress(Exception):
                sys.stdout.flush()
                sys.stderr.flush()
            os._exit(0)


async def serve_stdio(options: ChannelOptions, *, debug: bool = False) -> int:
    """Serve on stdin/stdout until stdin closes or SIGTERM/SIGINT arrives."""
    server = ChannelServer(options, debug=debug)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(_until_signal, server)
        async with stdio_server() as (read_stream, write_stream):
            await server.serve(read_stream, write_stream)
        tasks.cancel_scope.cancel()
    return 0
