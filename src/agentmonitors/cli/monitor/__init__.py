"""``agentmonitors monitor``: look into one monitor's history and delivery path.

One module per command, imported when it runs (``cli/lazy_group.py``).
"""

from __future__ import annotations

import click

from agentmonitors.cli.lazy_group import LazyGroup, LazyTable

COMMANDS: LazyTable = {
    "approve": (
        "agentmonitors.cli.monitor.approve:approve",
        "Let project monitors that run a command, fetch a URL or read outside the project"
        " run (only the user approves; never an agent).",
    ),
    "explain": (
        "agentmonitors.cli.monitor.explain:explain",
        "Why a monitor did or did not reach a session, stage by stage.",
    ),
    "history": (
        "agentmonitors.cli.monitor.history:history",
        "Recent observations, newest first: of the monitor MONITOR_ID, or without it of"
        " every monitor.",
    ),
    "test": (
        "agentmonitors.cli.monitor_test:test_monitor",
        "Dry-run one monitor: observe it once, store nothing.",
    ),
}


@click.group("monitor", cls=LazyGroup, lazy=COMMANDS, help="Inspect one monitor.")
def command() -> None:
    pass
