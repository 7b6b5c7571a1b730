"""``agentmonitors hook deliver``: the click command (help, usage errors) of the hook.

A plain invocation never gets here: the entry point runs it without click
(``cli/main.py``), through the same :func:`run_hook_deliver`.
"""

from __future__ import annotations

import click

from agentmonitors.cli.common_options import host_option
from agentmonitors.delivery.vocabulary import LIFECYCLES
from agentmonitors.transports.deliver import run_hook_deliver


@click.command(
    "deliver",
    help="Agent host hook (Claude Code: UserPromptSubmit, PostToolUse, Stop, SessionStart; "
    "see --host for the others): read the payload on stdin and print what the agent "
    "should see. Always exits 0.",
)
@host_option
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
    args = ["--host", host, "--format", output_format]
    if lifecycle:
        args += ["--lifecycle", lifecycle]
    if socket:
        args += ["--socket", socket]
    if debug:
        args.append("--debug")
    return run_hook_deliver(args)
