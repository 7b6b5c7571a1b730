"""``agentmonitors daemon start``: ``daemon run --detach`` under its own name."""

from __future__ import annotations

import click

from agentmonitors.cli.daemon.run import run, run_options


@click.command(
    "start",
    help="Start the daemon in the background (same as run --detach) over the monitors in DIR"
    " (default: <project>/.claude/monitors).",
)
@run_options
@click.pass_context
def start(ctx: click.Context, /, **_flags: object) -> int:
    # One path for both: run's checks and start, given this command's flags.
    result: int = ctx.forward(run, detach=True)
    return result
