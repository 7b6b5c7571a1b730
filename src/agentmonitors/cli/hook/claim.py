"""``agentmonitors hook claim``: claim a delivery by hand."""

from __future__ import annotations

import click

from agentmonitors.cli.common_options import socket_option
from agentmonitors.cli.completion import complete_session_id
from agentmonitors.cli.daemon_calls import SESSION_HINT, DaemonCallFailed, ask, manual_socket
from agentmonitors.cli.output import format_option, print_document
from agentmonitors.delivery.vocabulary import LIFECYCLES


@click.command("claim", help="Claim a delivery by hand (marks rows claimed, never acknowledged).")
@click.option(
    "--session",
    "session_id",
    required=True,
    help="AgentMon session id. " + SESSION_HINT,
    shell_complete=complete_session_id,
)
@click.option(
    "--lifecycle",
    type=click.Choice(LIFECYCLES),
    required=True,
    help="The delivery moment to claim for (it decides which urgencies are due).",
)
@socket_option
@format_option(("text", "json", "toon"), "json")
def claim(session_id: str, lifecycle: str, socket: str | None, output_format: str) -> int:
    try:
        result = ask(
            manual_socket(socket),
            "hook.claim",
            {"sessionId": session_id, "lifecycle": lifecycle},
            as_json=output_format == "json",
        )
    except DaemonCallFailed:
        return 1
    if print_document(result, output_format):
        pass
    elif result is None:
        click.echo("No pending delivery.")
    else:
        click.echo(result.get("message", ""))
    return 0
