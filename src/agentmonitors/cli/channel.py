"""``agentmonitors channel serve``: the optional MCP channel server (stdio).

Claude Code starts it from the plugin's ``.mcp.json``. stdout belongs to JSON-RPC, so
this command prints nothing there itself; the MCP SDK is imported only here.
"""

from __future__ import annotations

import functools
import sys

import click

from agentmonitors.delivery.heartbeats import CHANNEL_POLL_MS


@click.group("channel", help="The optional MCP channel transport.")
def command() -> None:
    pass


@command.command(
    "serve",
    short_help="Serve the MCP channel over stdio (started by the plugin's .mcp.json).",
    help="Serve the MCP channel over stdio: push deliveries into the Claude Code session "
    "as <channel> turns and offer the agentmon_ack tool.",
)
@click.option("--socket", help="Daemon socket (default: the enabled workspace's).")
@click.option(
    "--poll-ms",
    type=click.IntRange(min=1),
    default=CHANNEL_POLL_MS,
    show_default=True,
    help="Milliseconds between polls of the daemon (a positive whole number).",
)
@click.option(
    "--host-session-id",
    help="Claude Code session id (default: $CLAUDE_CODE_SESSION_ID).",
)
@click.option(
    "--workspace",
    help="Project directory or a folder inside it (default: the enabled project around the "
    "current directory, else around $CLAUDE_PROJECT_DIR).",
)
@click.option("--debug", is_flag=True, help="Say on stderr what each poll and push did.")
def serve(
    socket: str | None,
    poll_ms: int,
    host_session_id: str | None,
    workspace: str | None,
    debug: bool,
) -> int:
    if sys.stdin.isatty():
        click.echo(
            "agentmonitors channel serve speaks MCP (JSON-RPC) on stdin and stdout; Claude "
            "Code starts it from the plugin's .mcp.json. Press Ctrl-D to stop.",
            err=True,
        )
    # Lazy: the MCP SDK costs half a second that `channel --help` must not pay.
    import anyio

    # Lazy: the channel transport is the MCP server itself (the same half second).
    from agentmonitors.transports import channel, channel_options

    options = channel_options.resolve_options(
        socket=socket, poll_ms=poll_ms, host_session_id=host_session_id, workspace=workspace
    )
    return anyio.run(functools.partial(channel.serve_stdio, options, debug=debug))
