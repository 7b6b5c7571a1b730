"""``agentmonitors events list``: the click command; a plain run goes without click.

``cli/quick_commands.py`` runs a well-formed invocation straight from the entry point;
this command serves ``--help``, completion and what the quick parser leaves to click.
"""

from __future__ import annotations

from typing import Any

import click

from agentmonitors.cli.common_options import socket_option
from agentmonitors.cli.completion import complete_monitor_id
from agentmonitors.cli.events.options import scope_callback, session_option
from agentmonitors.cli.output import format_option
from agentmonitors.cli.quick_commands import DEFAULT_LIST_LIMIT, UsageProblem, events_list


@click.command(
    "list",
    help=f"A session's events, newest first: at most {DEFAULT_LIST_LIMIT} in toon and text "
    "unless --limit or --all says otherwise.",
)
@session_option
@socket_option
@click.option("--monitor", help="Only this monitor's events.", shell_complete=complete_monitor_id)
@click.option(
    "--urgency", type=click.Choice(["low", "normal", "high"]), help="Only events of this urgency."
)
@click.option("--tag", "tags", multiple=True, help="Only events with this tag (repeatable).")
@click.option(
    "--scope",
    callback=scope_callback,
    help="Only events whose scope matches: key=value,key2=value2 (e.g. filePath=docs/a.md).",
)
@click.option(
    "--unread",
    is_flag=True,
    help="Only events not acknowledged yet: deliveryState unread (never shown) or claimed"
    " (shown, not acknowledged).",
)
@click.option("--since-baseline", is_flag=True, help="Only events since the session began.")
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    help=f"Show at most this many events (default: {DEFAULT_LIST_LIMIT} in toon and text, "
    "all in json).",
)
@click.option("--all", "show_all", is_flag=True, help="Show every matching event.")
@format_option(("toon", "json", "text"), None)
def list_(**options: Any) -> int:
    try:
        return events_list(options)
    except UsageProblem as problem:
        raise click.UsageError(str(problem)) from problem


list_.name = "list"
