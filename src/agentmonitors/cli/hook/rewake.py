"""``agentmonitors hook rewake``: the click command (help, usage errors) of the hook.

A plain invocation never gets here: the entry point runs it without click
(``cli/main.py``), through the same :func:`run_hook_rewake`.
"""

from __future__ import annotations

import click

from agentmonitors.transports.rewake import run_hook_rewake


@click.command(
    "rewake",
    help="Claude Code Stop hook run with asyncRewake: in a headless stream-json session,"
    " wait in the background for the session's next delivery and exit 2 with it on stderr"
    " (a new turn). Exits 0 at once when a live follower already serves the session or"
    " when the host cannot be woken (plain -p).",
)
@click.option("--socket", help="Unix socket of the daemon (default: the workspace's).")
def rewake(socket: str | None) -> int:
    return run_hook_rewake(["--socket", socket] if socket else [])
