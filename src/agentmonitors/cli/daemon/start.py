"""``agentmonitors daemon start``: ``daemon run --detach`` under its own name."""

from __future__ import annotations

import click

from agentmonitors.cli.daemon.run import check_numbers, daemon_options, run_options, start_detached
from agentmonitors.cli.output import report_error


@click.command(
    "start",
    help="Start the daemon in the background (same as run --detach) over the monitors in DIR"
    " (default: <project>/.claude/monitors).",
)
@run_options
def start(
    monitors_dir: str | None,
    workspace: str | None,
    poll_ms: int,
    socket: str | None,
    reap_after_ms: int,
    log_path: str | None,
) -> int:
    problem = check_numbers(poll_ms, reap_after_ms)
    if problem is not None:
        return report_error(problem, False)
    return start_detached(
        daemon_options(monitors_dir, workspace, socket, poll_ms, reap_after_ms), log_path
    )
