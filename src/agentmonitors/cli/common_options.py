"""The options many commands share, worded once: ``--dir``, ``--workspace``, ``--socket``.

A command that means something else by one of them (``session open``'s ``--workspace``
defaults to the current directory; ``daemon run``'s ``--socket`` is where it listens)
declares its own. Imports click alone: hook commands use these too.
"""

from __future__ import annotations

import click

__all__ = ["dir_option", "socket_option", "workspace_option"]

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
