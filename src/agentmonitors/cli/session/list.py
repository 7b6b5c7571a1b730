"""``agentmonitors session list``: the click command; a plain run goes without click."""

from __future__ import annotations

from typing import Any

import click

from agentmonitors.cli.common_options import socket_option
from agentmonitors.cli.output import format_option
from agentmonitors.cli.quick_commands import session_list


@click.command("list", help="Every session the daemon knows, most recently active first.")
@socket_option
@format_option(("text", "json", "toon"), "text")
def list_(**options: Any) -> int:
    return session_list(options)


list_.name = "list"
