"""``agentmonitors events ack``: the click command; a plain run goes without click."""

from __future__ import annotations

from typing import Any

import click

from agentmonitors.cli.common_options import socket_option
from agentmonitors.cli.events.options import session_option
from agentmonitors.cli.output import format_option
from agentmonitors.cli.quick_commands import events_ack


@click.command("ack", help="Acknowledge events (all unread when --event-ids is omitted).")
@session_option
@socket_option
@click.option(
    "--event-ids",
    help="Comma-separated ids; omit to acknowledge every unread event except rows an "
    "in-flight delivery is holding.",
)
@format_option(("text", "json", "toon"), "text")
def ack(**options: Any) -> int:
    return events_ack(options)
