"""``agentmonitors daemon once``: the click command (help, completion, usage errors).

The work, and the quick path a plain invocation takes without click, live in
``tick_once.py``.
"""

from __future__ import annotations

import click

from agentmonitors.cli.common_options import workspace_option
from agentmonitors.cli.output import format_option
from agentmonitors.cli.tick_once import once_text, run_once

__all__ = ["once", "once_text"]


@click.command(
    "once",
    help=(
        "Run one observation cycle in this process (no socket) over the monitors in DIR"
        " (default: <project>/.claude/monitors). A monitor that failed"
        " waits out its backoff (5s after the first failure, doubling up to 5m) just as"
        " in a running daemon; --force observes it now. Editing a monitor's file ends"
        " its backoff."
    ),
)
@click.argument("monitors_dir", required=False, metavar="[DIR]")
@workspace_option
@click.option(
    "--force",
    is_flag=True,
    help="Observe monitors that are backing off after failures now, without waiting.",
)
@format_option(("text", "json", "toon"), "text")
def once(monitors_dir: str | None, workspace: str | None, force: bool, output_format: str) -> int:
    return run_once(monitors_dir, workspace, force, output_format)
