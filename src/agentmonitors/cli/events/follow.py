"""``agentmonitors events follow``: one line per delivery, live, for Claude Code's Monitor tool."""

from __future__ import annotations

from typing import Any

import click

from agentmonitors.cli.daemon_calls import manual_socket
from agentmonitors.cli.events.options import session_option
from agentmonitors.cli.output import format_option
from agentmonitors.transports.follow import run_follow


@click.command(
    "follow",
    help="Print one line per delivery for a session, live, until stopped: meant for Claude "
    "Code's Monitor tool (each line becomes a turn while the session is idle). Diagnostics go "
    "to stderr.",
)
@session_option
@click.option("--socket", help="Unix socket of the daemon.")
@click.option(
    "--max-seconds",
    type=click.FloatRange(min=0, min_open=True),
    default=25 * 60,
    show_default=True,
    help="Stop after this long with a line asking to be started again (the Monitor tool "
    "stops commands after 30 minutes).",
)
@format_option(("text", "json"), "text")
def follow(**options: Any) -> int:
    return run_follow(
        options["session_id"],
        manual_socket(options.get("socket")),
        max_seconds=options["max_seconds"],
        fmt=options["output_format"],
    )
