"""``agentmonitors session close``: mark a session dormant by hand."""

from __future__ import annotations

import click

from agentmonitors.cli.common_options import socket_option
from agentmonitors.cli.completion import complete_session_id
from agentmonitors.cli.daemon_calls import DaemonCallFailed, ask, manual_socket
from agentmonitors.cli.output import format_option, print_document


@click.command("close", help="Mark a session dormant (it keeps its events).")
@click.argument("session_id", shell_complete=complete_session_id)
@socket_option
@format_option(("text", "json", "toon"), "text")
def close(session_id: str, socket: str | None, output_format: str) -> int:
    try:
        record = ask(
            manual_socket(socket),
            "session.close",
            {"sessionId": session_id},
            as_json=output_format == "json",
        )
    except DaemonCallFailed:
        return 1
    if not print_document(record, output_format):
        click.echo(f"Closed session: {record['id']}")
    return 0
