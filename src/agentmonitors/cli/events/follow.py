"""``agentmonitors events follow``: one line per delivery, live, for a Claude Code monitor."""

from __future__ import annotations

import os
from typing import Any

import click

from agentmonitors.cli.common_options import socket_option
from agentmonitors.cli.completion import complete_session_id
from agentmonitors.cli.daemon_calls import SESSION_HINT, manual_socket
from agentmonitors.cli.output import format_option
from agentmonitors.transports.follow import run_follow
from agentmonitors.transports.follow_host import HOST_SESSION_ENV, run_host_follow


@click.command(
    "follow",
    help="Print one line per delivery for a session, live, until stopped: each line becomes a "
    "turn while a Claude Code session is idle. With --session (the agent's Monitor tool) it "
    "stops after --max-seconds; with --host-session (the plugin's monitor; "
    f"${HOST_SESSION_ENV} when neither is given) it waits silently for that session and "
    "lives as long as it. Diagnostics go to stderr.",
)
@click.option(
    "--session",
    "session_id",
    help="AgentMon session id. " + SESSION_HINT,
    shell_complete=complete_session_id,
)
@click.option(
    "--host-session",
    "host_session_id",
    help="Claude Code's session id (default: $CLAUDE_CODE_SESSION_ID): follow the AgentMon "
    "session it registers, for as long as it lives.",
)
@socket_option
@click.option(
    "--max-seconds",
    type=click.FloatRange(min=0, min_open=True),
    default=25 * 60,
    show_default=True,
    help="With --session: stop after this long with a line asking to be started again (the "
    "Monitor tool stops commands after 30 minutes).",
)
@format_option(("text", "json"), "text")
def follow(**options: Any) -> int:
    session_id = options.get("session_id")
    host_session_id = options.get("host_session_id")
    if session_id and host_session_id:
        raise click.UsageError("give --session or --host-session, not both")
    if not session_id:
        host_session_id = host_session_id or os.environ.get(HOST_SESSION_ENV)
        if not host_session_id:
            raise click.UsageError(
                f"Missing option '--session' (or '--host-session', or ${HOST_SESSION_ENV}).\n"
                + SESSION_HINT
            )
        socket = options.get("socket")
        return run_host_follow(
            host_session_id, manual_socket(socket) if socket else None, options["output_format"]
        )
    return run_follow(
        session_id,
        manual_socket(options.get("socket")),
        max_seconds=options["max_seconds"],
        fmt=options["output_format"],
    )
