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
def start(
    ctx: click.Context,
    monitors_dir: str | None,
    workspace: str | None,
    poll_ms: int,
    socket: str | None,
    reap_after_ms: int,
    log_path: str | None,
) -> int:
    # One path for both: the checks and the start are run's own.
    result: int = ctx.invoke(
        run,
        monitors_dir=monitors_dir,
        workspace=workspace,
        poll_ms=poll_ms,
        socket=socket,
        reap_after_ms=reap_after_ms,
        log_path=log_path,
        detach=True,
    )
    return result
