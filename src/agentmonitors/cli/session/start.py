"""``agentmonitors session start``: the SessionStart hook's click command (help, usage errors).

A plain invocation runs without click (``cli/main.py``), through the same function.
"""

from __future__ import annotations

import click

from agentmonitors.cli.common_options import host_option
from agentmonitors.transports.session_hooks import run_session_start


@click.command("start", help="SessionStart hook: boot the daemon, register, print the recap.")
@host_option
def start(host: str) -> int:
    return run_session_start(["--host", host])
