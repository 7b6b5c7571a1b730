"""``channel serve`` driven by the official MCP client over stdio, against a real daemon.

The daemon runs in its own process with a clock the test sets (``tests/daemon/clocked.py``),
so a high event settles and a lease lapses when the test says, not after real waits. Hooks
run as real ``agentmonitors`` processes with Claude Code's payloads on stdin.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.message import SessionMessage
from mcp.types import JSONRPCNotification

from agentmonitors.daemon.channels import channel_attached
from agentmonitors.delivery.heartbeats import read_records
from agentmonitors.transports.channel import INSTRUCTIONS
from tests.conftest import CliResult
from tests.transports.clocked_project import Project
from tests.waiting import wait_for

pytestmark = pytest.mark.slow

Run = Callable[..., CliResult]


@pytest.fixture
def project(clocked_project: Project) -> Project:
    return clocked_project


@dataclass
class Channel:
    session: ClientSession
    init: Any
    pushes: anyio.abc.ObjectReceiveStream[dict[str, Any]]
    stderr: Path

    async def next_push(self, timeout: float = 15) -> dict[str, Any]:
        with anyio.fail_after(timeout):
            return await self.pushes.receive()

    async def no_push(self, seconds: float) -> None:
        with anyio.move_on_after(seconds):
            push = await self.pushes.receive()
            raise AssertionError(f"unexpected push: {push}")

    async def ack(self, arguments: dict[str, Any] | None) -> tuple[str, bool]:
        result = await self.session.call_tool("agentmon_ack", arguments)
        return result.content[0].text, bool(result.isError)  # type: ignore[union-attr]


@contextlib.asynccontextmanager
async def open_channel(
    project: Project, host: str | None, *extra: str, poll_ms: int = 100
) -> AsyncIterator[Channel]:
    env = {key: value for key, value in os.environ.items() if key != "CLAUDE_CODE_SESSION_ID"}
    env["CLAUDE_PROJECT_DIR"] = project.ws
    if host is not None:
        env["CLAUDE_CODE_SESSION_ID"] = host
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "agentmonitors", "channel", "serve", "--poll-ms", str(poll_ms), *extra],
        env=env,
        cwd=project.ws,
    )
    stderr = project.root.parent / f"channel-{host}-{time.monotonic_ns()}.err"
    push_send, push_receive = anyio.create_memory_object_stream[dict[str, Any]](100)
    with stderr.open("w") as errlog:
        async with (
            push_send,
            push_receive,
            stdio_client(params, errlog=errlog) as (read, write),
        ):
            forward, tapped = anyio.create_memory_object_stream[SessionMessage | Exception](100)

            async def tap() -> None:
                # The SDK's client drops notifications it does not know; catch ours first.
                async with forward:
                    async for message in read:
                        root = message.message.root if isinstance(message, SessionMessage) else None
                        if (
                            isinstance(root, JSONRPCNotification)
                            and root.method == "notifications/claude/channel"
                        ):
                            await push_send.send(dict(root.params or {}))
                            continue
                        await forward.send(message)

            async with forward, tapped, anyio.create_task_group() as tasks:
                tasks.start_soon(tap)
                async with ClientSession(tapped, write) as session:
                    init = await session.initialize()
                    yield Channel(session, init, push_receive, stderr)
                tasks.cancel_scope.cancel()


def channel_tag(push: dict[str, Any], source: str = "plugin:agentmonitors:agentmonitors") -> str:
    """What Claude Code puts in the prompt of the turn a shown push starts."""
    attributes = " ".join(f'{key}="{value}"' for key, value in push["meta"].items())
    return f'<channel source="{source}" {attributes}>\n{push["content"]}\n</channel>'


# --------------------------------------------------------------------------- the whole loop


def test_push_proof_claim_and_ack(project: Project) -> None:
    session_id = project.start_session("host-1")

    async def scenario() -> None:
        async with open_channel(project, "host-1") as channel:
            capabilities = channel.init.capabilities
            assert capabilities.experimental == {"claude/channel": {}}
            assert capabilities.tools is not None
            assert channel.init.serverInfo.name == "agentmonitors"
            assert channel.init.instructions == INSTRUCTIONS
            tools = (await channel.session.list_tools()).tools
            assert [tool.name for tool in tools] == ["agentmon_ack"]
            assert tools[0].inputSchema["properties"]["event_ids"]["type"] == "array"

            event_id = project.settled_change()
            push = await channel.next_push()
            meta = push["meta"]
            assert set(meta) == {
                "lifecycle",
                "mode",
                "event_count",
                "urgency",
                "monitor_id",
                "event_id",
                "delivery_id",
            }
            assert meta["lifecycle"] == "turn-interruptible"
            assert meta["mode"] == "delivery"
            assert meta["event_count"] == "1"
            assert meta["urgency"] == "high"
            assert meta["monitor_id"] == "notes"
            assert meta["event_id"] == event_id
            assert all(key.replace("_", "").isalnum() for key in meta)
            assert "notes/a.txt" in push["content"]
            assert not push["content"].startswith("AgentMon: ")
            # Sent, not yet shown: the lease holds the row, nothing is claimed yet.
            assert project.states("host-1") == {event_id: "unread"}

            # The host shows it: the channel turn's UserPromptSubmit carries the tag.
            out, _err = project.prompt("host-1", channel_tag(push))
            assert out == ""
            assert project.states("host-1") == {event_id: "claimed"}
            assert project.ipc("channel.status", {"sessionId": session_id})["confirmed"]

            # A later ordinary prompt has nothing left to show for it.
            out, _err = project.prompt("host-1", "carry on")
            assert out == ""

            text, error = await channel.ack({"event_ids": [event_id]})
            assert not error
            assert text == "Acknowledged 1 of 1 event(s)."
            assert project.states("host-1") == {event_id: "acknowledged"}

    anyio.run(scenario)


def test_server_discover_is_method_not_found_then_initialize_works(project: Project) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "agentmonitors", "channel", "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=project.root,
        env={**os.environ, "CLAUDE_CODE_SESSION_ID": "host-d", "CLAUDE_PROJECT_DIR": project.ws},
    )
    assert process.stdin is not None and process.stdout is not None

    def ask(message: dict[str, Any]) -> dict[str, Any]:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write((json.dumps(message) + "\n").encode())
        process.stdin.flush()
        return dict(json.loads(process.stdout.readline()))

    try:
        discover = ask({"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {}})
        assert discover == {
            "jsonrpc": "2.0",
            "id": 0,
            "error": {"code": -32601, "message": "Method not found"},
        }
        for requested in ("2025-11-25", "2026-07-28"):
            init = ask(
                {
                    "jsonrpc": "2.0",
                    "id": requested,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": requested,
                        "capabilities": {},
                        "clientInfo": {"name": "claude-code", "version": "2.1.332"},
                    },
                }
            )
            result = init["result"]
            assert result["protocolVersion"] <= "2025-11-25"
            assert result["capabilities"]["experimental"] == {"claude/channel": {}}
    finally:
        process.stdin.close()
        assert process.wait(20) == 0
        process.stdout.close()
        assert process.stderr is not None
        process.stderr.close()


# --------------------------------------------------------------------------- parity


def test_hooks_and_channel_make_the_same_claim_and_leave_the_same_states(
    project: Project,
) -> None:
    project.start_session("via-hook")
    project.start_session("via-channel")

    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        async with open_channel(project, "via-channel", "--debug") as channel:
            event_id = project.settled_change()
            push = await channel.next_push()
            out, err = project.prompt("via-hook", "what changed?", "--debug")
            assert "notes/a.txt" in json.loads(out)["hookSpecificOutput"]["additionalContext"]
            hook_claim = json.loads(err.split("claim json ", 1)[1].splitlines()[0])
            project.prompt("via-channel", channel_tag(push))
            lines = wait_for(lambda: "claim json " in channel.stderr.read_text())
            assert lines
            channel_claim = json.loads(
                channel.stderr.read_text().split("claim json ", 1)[1].splitlines()[0]
            )
            assert (
                project.states("via-hook") == project.states("via-channel") == {event_id: "claimed"}
            )
            assert (await channel.ack({"event_ids": [event_id]}))[1] is False
        session = project.session_id("via-hook")
        ack = subprocess.run(
            [sys.executable, "-m", "agentmonitors", "events", "ack", "--session", session,
             "--event-ids", event_id, "--socket", project.daemon.socket],
            capture_output=True, check=False, cwd=project.root,
        )  # fmt: skip
        assert ack.returncode == 0, ack.stderr
        return hook_claim, channel_claim

    hook_claim, channel_claim = anyio.run(scenario)
    for claim in (hook_claim, channel_claim):
        claim.pop("sessionId")
    assert hook_claim == channel_claim
    assert project.states("via-hook") == project.states("via-channel")
    assert set(project.states("via-hook").values()) == {"acknowledged"}


# --------------------------------------------------------------------------- failure paths


def test_channels_off_the_hook_still_delivers_and_the_channel_stops_pushing(
    project: Project,
) -> None:
    session_id = project.start_session("host-off")

    async def scenario() -> None:
        async with open_channel(project, "host-off") as channel:
            event_id = project.settled_change()
            await channel.next_push()  # sent; the host drops it and nothing confirms it
            out, _err = project.prompt("host-off", "next question")
            context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
            assert context.startswith("AgentMon: ")
            assert event_id in context
            assert project.states("host-off") == {event_id: "claimed"}
            status = project.ipc("channel.status", {"sessionId": session_id})
            assert status == {"confirmed": False, "awaitingProof": True, "pushes": 1}

            # A second change: the channel holds back until a push is ever confirmed,
            # so the hook is never starved by leases nobody sees.
            second = project.settled_change("changed again\n")
            await channel.no_push(1.0)
            out, _err = project.prompt("host-off", "and now?")
            assert second in json.loads(out)["hookSpecificOutput"]["additionalContext"]

    anyio.run(scenario)


def test_an_unconfirmed_push_lapses_back_to_pending(project: Project) -> None:
    project.start_session("host-lapse")

    async def scenario() -> None:
        async with open_channel(project, "host-lapse") as channel:
            event_id = project.settled_change()
            push = await channel.next_push()
            project.daemon.advance(31)  # past the 30 s lease
            # Nothing claimed it; the lease is gone, so the row is deliverable again.
            preview = project.ipc("hook.preview", {"sessionId": project.session_id("host-lapse")})
            assert [item["eventId"] for item in preview] == [event_id]
            # A late proof still counts: the host did show it.
            out, _err = project.prompt("host-lapse", channel_tag(push))
            assert out == ""
            assert project.states("host-lapse") == {event_id: "claimed"}

    anyio.run(scenario)


def test_a_push_that_fails_mid_send_leaves_the_events_pending(project: Project) -> None:
    """The server's write fails (the client end is gone): released, delivered next time."""
    from mcp.server.session import ServerSession  # noqa: F401  (the SDK the server uses)

    from agentmonitors.transports.channel import ChannelServer
    from agentmonitors.transports.channel_options import resolve_options

    project.start_session("host-fail")
    event_id = project.settled_change()
    options = resolve_options(
        socket=None, poll_ms="100", host_session_id="host-fail", workspace=project.ws
    )

    async def failing_push() -> bool:
        server = ChannelServer(options)
        to_server, server_reads = anyio.create_memory_object_stream[SessionMessage | Exception](8)
        server_writes, from_server = anyio.create_memory_object_stream[SessionMessage](8)

        class Session:
            async def send_notification(self, notification: Any) -> None:
                await from_server.aclose()  # the client went away mid-send
                await server_writes.send(notification)

        server._session = Session()  # type: ignore[assignment]
        try:
            return await server.poll_once()
        finally:
            server.shutdown()
            for stream in (to_server, server_reads, server_writes):
                await stream.aclose()

    assert anyio.run(failing_push) is False
    session_id = project.session_id("host-fail")
    assert project.states("host-fail") == {event_id: "unread"}
    preview = project.ipc("hook.preview", {"sessionId": session_id})
    assert [item["eventId"] for item in preview] == [event_id]

    async def next_try() -> None:
        async with open_channel(project, "host-fail") as channel:
            push = await channel.next_push()
            assert push["meta"]["event_id"] == event_id

    anyio.run(next_try)


# --------------------------------------------------------------------------- the ack tool


def test_ack_tool_arguments_and_results(project: Project) -> None:
    project.start_session("host-ack")

    async def scenario() -> None:
        async with open_channel(project, "host-ack") as channel:
            assert await channel.ack({"event_ids": "abc"}) == (
                "Invalid arguments: event_ids must be an array of strings",
                True,
            )
            assert await channel.ack({"event_ids": [1, 2]}) == (
                "Invalid arguments: event_ids must be an array of strings",
                True,
            )
            text, error = await channel.ack({"event_ids": []})
            assert not error and text.startswith("No event ids given, so nothing was acknowledged")
            text, error = await channel.ack({"event_ids": ["no-such-event"]})
            assert not error
            assert text == (
                "Acknowledged 0 of 1 event(s). Not projected to this session (ignored): "
                "no-such-event."
            )
            assert await channel.ack(None) == (
                "Nothing to acknowledge: this session has no unread events.",
                False,
            )
            event_id = project.settled_change()
            await channel.next_push()
            # Ack-all leaves a row leased by an in-flight push alone, and says so ...
            text, error = await channel.ack(None)
            assert not error
            assert text.startswith("Acknowledged 0 of 1 unread event(s); 1 stay unread because")
            assert "all" not in text.split(";")[0]
            assert project.states("host-ack") == {event_id: "unread"}
            # ... and naming it proves the push and acknowledges it.
            assert await channel.ack({"event_ids": [event_id]}) == (
                "Acknowledged 1 of 1 event(s).",
                False,
            )
            assert project.states("host-ack") == {event_id: "acknowledged"}
            assert await channel.ack({"event_ids": [event_id]}) == (
                "Acknowledged 0 of 1 event(s). 1 were already acknowledged.",
                False,
            )
            second = project.settled_change("again\n")
            push = await channel.next_push()
            out, _err = project.prompt("host-ack", channel_tag(push))  # shown: claimed
            assert out == "" and project.states("host-ack")[second] == "claimed"
            assert await channel.ack(None) == (
                "Acknowledged all 1 unread event(s) of this session.",
                False,
            )
            assert project.states("host-ack")[second] == "acknowledged"

    anyio.run(scenario)


def test_without_a_session_id_it_stays_connected_and_never_binds(project: Project) -> None:
    async def scenario() -> None:
        async with open_channel(project, None) as channel:
            text, error = await channel.ack({})
            assert error and "no CLAUDE_CODE_SESSION_ID" in text
            assert "no CLAUDE_CODE_SESSION_ID available; not binding" in channel.stderr.read_text()

    anyio.run(scenario)
    assert project.ipc("session.list", {}) == []


# --------------------------------------------------------------------------- lifetime


@pytest.mark.parametrize("ending", ["stdin", signal.SIGTERM, signal.SIGINT])
def test_heartbeat_keeps_the_daemon_company_and_goes_with_the_channel(
    project: Project, ending: Any
) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "agentmonitors", "channel", "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=project.root,
        env={**os.environ, "CLAUDE_CODE_SESSION_ID": "host-hb", "CLAUDE_PROJECT_DIR": project.ws},
    )
    assert process.stdin is not None
    records = wait_for(lambda: [r for r in read_records() if r.get("transport") == "channel"])
    assert records[0]["workspacePath"] == project.ws
    assert records[0]["socketPath"] == project.daemon.socket
    assert records[0]["hostSessionId"] == "host-hb"
    now = time.time_ns() // 1_000_000
    assert channel_attached(project.daemon.socket, project.ws, now)
    if ending == "stdin":
        process.stdin.close()
    else:
        process.send_signal(ending)
    assert process.wait(20) == 0
    assert [r for r in read_records() if r.get("transport") == "channel"] == []
    for stream in (process.stdin, process.stdout, process.stderr):
        if stream is not None:
            stream.close()


def test_a_workspace_that_is_not_enabled_is_never_bound(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    process = subprocess.run(
        [sys.executable, "-m", "agentmonitors", "channel", "serve"],
        input=(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {},
                        "clientInfo": {"name": "t", "version": "1"},
                    },
                }
            )
            + "\n"
            + json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
            + "\n"
            + json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "tools/call",
                    "params": {"name": "agentmon_ack", "arguments": {}},
                }
            )
            + "\n"
        ).encode(),
        capture_output=True,
        timeout=60,
        check=False,
        cwd=root,
        env={**os.environ, "CLAUDE_CODE_SESSION_ID": "host-x", "CLAUDE_PROJECT_DIR": str(root)},
    )
    assert process.returncode == 0
    replies = [json.loads(line) for line in process.stdout.decode().splitlines()]
    result = replies[-1]["result"]
    assert result["isError"] is True
    assert result["content"][0]["text"] == f"Acknowledge failed: monitoring is disabled in {root}"
    assert f"monitoring is disabled in {root}; not binding" in process.stderr.decode()


def test_started_in_a_subfolder_it_binds_to_the_enclosing_project(project: Project) -> None:
    """Like the hooks, the channel walks up to the enabled project (no CLAUDE_PROJECT_DIR)."""
    sub = project.root / "notes"
    env = {key: value for key, value in os.environ.items() if key != "CLAUDE_PROJECT_DIR"}
    process = subprocess.Popen(
        [sys.executable, "-m", "agentmonitors", "channel", "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=sub,
        env={**env, "CLAUDE_CODE_SESSION_ID": "host-sub", "PWD": str(sub)},
    )
    assert process.stdin is not None
    try:
        records = wait_for(lambda: [r for r in read_records() if r.get("transport") == "channel"])
        assert records[0]["workspacePath"] == project.ws
        assert records[0]["socketPath"] == project.daemon.socket
    finally:
        process.stdin.close()
        assert process.wait(20) == 0
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def test_poll_ms_must_be_a_positive_whole_number(run_cli: Run) -> None:
    for bad in ("0", "-5", "1.5", "soon"):
        result = run_cli("channel", "serve", "--poll-ms", bad)
        assert result.code == 2, bad
        lines = result.err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: Invalid value for '--poll-ms'")
