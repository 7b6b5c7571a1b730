"""``agentmonitors hook``: deliver at an agent host's hook, or claim by hand."""

from __future__ import annotations

import click

from agentmonitors.cli.completion import complete_session_id
from agentmonitors.cli.daemon_calls import SESSION_HINT, DaemonCallFailed, ask, manual_socket
from agentmonitors.cli.output import format_option, print_document
from agentmonitors.delivery.vocabulary import LIFECYCLES
from agentmonitors.transports.hosts import DEFAULT_HOST, HOSTS


@click.group("hook", help="Deliveries at agent hooks.")
def command() -> None:
    pass


@command.command(
    "deliver",
    help="Agent host hook (Claude Code: UserPromptSubmit, PostToolUse, Stop, SessionStart; "
    "see --host for the others): read the payload on stdin and print what the agent "
    "should see. Always exits 0.",
)
@click.option(
    "--host",
    type=click.Choice(HOSTS),
    default=DEFAULT_HOST,
    show_default=True,
    help="The agent host whose hook runs this (its payload and output shapes).",
)
@click.option(
    "--lifecycle",
    type=click.Choice(LIFECYCLES),
    help="Deliver for this lifecycle instead of the one the hook event maps to.",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="json",
    help="Output format: text for the delivery alone, json for the hook JSON the host reads."
    " Default: json.",
)
@click.option("--socket", help="Unix socket of the daemon (default: the workspace's).")
@click.option("--debug", is_flag=True, help="Explain each step on stderr.")
def deliver(
    host: str, lifecycle: str | None, output_format: str, socket: str | None, debug: bool
) -> int:
    from agentmonitors.transports.deliver import run_hook_deliver

    args = ["--host", host, "--format", output_format]
    if lifecycle:
        args += ["--lifecycle", lifecycle]
    if socket:
        args += ["--socket", socket]
    if debug:
        args.append("--debug")
    return run_hook_deliver(args)


@command.command("claim", help="Claim a delivery by hand (marks rows claimed, never acknowledged).")
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
@click.option("--socket", help="Unix socket of the daemon.")
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
