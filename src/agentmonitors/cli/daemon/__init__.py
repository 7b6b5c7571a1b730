"""``agentmonitors daemon``: run, start, stop and inspect the per-workspace daemon.

One module per command, imported when it runs (``cli/lazy_group.py``): ``daemon
--help`` and ``daemon status`` never load the daemon itself.
"""

from __future__ import annotations

import click

from agentmonitors.cli.lazy_group import LazyGroup, LazyTable

COMMANDS: LazyTable = {
    "once": (
        "agentmonitors.cli.daemon.once:once",
        "Run one observation cycle in this process (no socket) over the monitors in DIR"
        " (default: <project>/.claude/monitors).",
    ),
    "run": (
        "agentmonitors.cli.daemon.run:run",
        "Run the daemon in the foreground (or --detach it) over the monitors in DIR"
        " (default: <project>/.claude/monitors).",
    ),
    "start": (
        "agentmonitors.cli.daemon.start:start",
        "Start the daemon in the background (same as run --detach) over the monitors in DIR"
        " (default: <project>/.claude/monitors).",
    ),
    "status": (
        "agentmonitors.cli.daemon.status:status",
        "Whether the daemon runs, and what it holds.",
    ),
    "stop": ("agentmonitors.cli.daemon.stop:stop", "Ask the workspace's daemon to stop."),
}


@click.group(
    "daemon", cls=LazyGroup, lazy=COMMANDS, help="The per-workspace daemon that runs monitors."
)
def command() -> None:
    pass
