"""``agentmonitors session``: register, list and close agent sessions.

``session start`` and ``session end`` are the SessionStart and SessionEnd hooks; the
entry point runs them before click is even imported, and these click commands (which
exist for ``--help``) call the same code.
"""

from __future__ import annotations

import os
from typing import Any

import click

from agentmonitors.cli.agent_commands import session_list, sessions_table
from agentmonitors.cli.completion import complete_session_id
from agentmonitors.cli.daemon_calls import DaemonCallFailed, ask, manual_socket
from agentmonitors.cli.output import format_option, print_document
from agentmonitors.transports.hosts import DEFAULT_HOST, HOSTS

__all__ = ["command", "session_text", "sessions_table"]


@click.group("session", help="Agent sessions that receive deliveries.")
def command() -> None:
    pass


def host_option(function: Any) -> Any:
    return click.option(
        "--host",
        type=click.Choice(HOSTS),
        default=DEFAULT_HOST,
        show_default=True,
        help="The agent host whose hook runs this (its payload and output shapes).",
    )(function)


@command.command("start", help="SessionStart hook: boot the daemon, register, print the recap.")
@host_option
def start(host: str) -> int:
    from agentmonitors.transports.session_hooks import run_session_start

    return run_session_start(["--host", host])


@command.command("end", help="SessionEnd hook: mark the session dormant. Always exits 0.")
@host_option
def end(host: str) -> int:
    from agentmonitors.transports.session_hooks import run_session_end

    return run_session_end(["--host", host])


def session_text(record: dict[str, Any]) -> str:
    return "\n".join(
        [
            f"Opened session: {record['id']}",
            f"Agent identity: {record.get('agentIdentity', '')}",
            f"Hook state: {record.get('hookStatePath', '')}",
        ]
    )


@command.command("open", help="Register (or resume) a session by its host session id.")
@click.option("--host-session-id", required=True, help="The agent host's session id.")
@click.option("--workspace", help="Project directory (default: the current directory).")
@click.option("--socket", help="Unix socket of the daemon.")
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
    from agentmonitors.paths import default_hook_state_path
    from agentmonitors.workspace import logical_cwd

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


@command.command("close", help="Mark a session dormant (it keeps its events).")
@click.argument("session_id", shell_complete=complete_session_id)
@click.option("--socket", help="Unix socket of the daemon.")
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


@command.command("list", help="Every session the daemon knows, most recently active first.")
@click.option("--socket", help="Unix socket of the daemon.")
@format_option(("text", "json", "toon"), "text")
def list_(**options: Any) -> int:
    return session_list(options)


list_.name = "list"
