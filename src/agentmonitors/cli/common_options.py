"""The options many commands share, worded once: ``--dir``, ``--workspace``, ``--socket``,
and the hook commands' ``--host``.

A command that means something else by one of them (``session open``'s ``--workspace``
defaults to the current directory; ``daemon run``'s ``--socket`` is where it listens)
declares its own. Imports click alone: hook commands use these too.
"""

from __future__ import annotations

from typing import Any

import click

from agentmonitors.transports.hosts import DEFAULT_HOST, HOSTS

__all__ = ["dir_option", "host_option", "socket_option", "workspace_option"]

dir_option = click.option(
    "--dir",
    "monitors_dir",
    metavar="DIR",
    help="Monitors folder (default: <project>/.claude/monitors).",
)
workspace_option = click.option(
    "--workspace", help="Project directory (default: the current project)."
)
socket_option = click.option("--socket", help="Unix socket of the daemon.")


def host_option(function: Any) -> Any:
    return click.option(
        "--host",
        type=click.Choice(HOSTS),
        default=DEFAULT_HOST,
        show_default=True,
        help="The agent host whose hook runs this (its payload and output shapes).",
    )(function)
