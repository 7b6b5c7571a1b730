"""``agentmonitors session open``: register (or resume) a session by hand."""

from __future__ import annotations

import os
from typing import Any

import click

from agentmonitors.cli.common_options import host_option, socket_option
from agentmonitors.cli.daemon_calls import DaemonCallFailed, ask, manual_socket
from agentmonitors.cli.output import print_document
from agentmonitors.paths import default_hook_state_path
from agentmonitors.workspace import logical_cwd


def session_text(record: dict[str, Any]) -> str:
    return "\n".join(
        [
            f"Opened session: {record['id']}",
            f"Agent identity: {record.get('agentIdentity', '')}",
            f"Hook state: {record.get('hookStatePath', '')}",
        ]
    )


@click.command("open", help="Register (or resume) a session by its host session id.")
@click.option("--host-session-id", required=True, help="The agent host's session id.")
@click.option("--workspace", help="Project directory (default: the current directory).")
@socket_option
@click.option("--agent-identity", help="Who the agent is (default: the host session id).")
@click.option("--hook-state-path", help="Where the hook-state file is written.")
@click.option(
    "--role",
    type=click.Choice(["lead", "subagent"]),
    default="lead",
    show_default=True,
    help="A lead session, or a subagent working for one.",
)
@host_option
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json", "toon", "id"]),
    default="text",
    help="Output format: text for people, json for scripts, toon (the JSON's data, compact) "
    "for agents, id for the session id alone. Default: text.",
)
def open_(
    host_session_id: str,
    workspace: str | None,
    socket: str | None,
    agent_identity: str | None,
    hook_state_path: str | None,
    role: str,
    host: str,
    output_format: str,
) -> int:

    workspace_path = os.path.normpath(os.path.join(logical_cwd(), workspace or "."))
    params = {
        "adapter": host,
        "hostSessionId": host_session_id,
        "agentIdentity": agent_identity or host_session_id,
        "hookStatePath": hook_state_path
        or default_hook_state_path(host_session_id, workspace_path),
        "workspacePath": workspace_path,
        "role": role,
    }
    try:
        record = ask(
            manual_socket(socket, workspace_path),
            "session.open",
            params,
            as_json=output_format == "json",
        )
    except DaemonCallFailed:
        return 1
    if print_document(record, output_format):
        pass
    elif output_format == "id":
        click.echo(record["id"])
    else:
        click.echo(session_text(record))
    return 0


open_.name = "open"
