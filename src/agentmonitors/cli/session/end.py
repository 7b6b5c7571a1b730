"""``agentmonitors session end``: the SessionEnd hook's click command (help, usage errors).

A plain invocation runs without click (``cli/main.py``), through the same function.
"""

from __future__ import annotations

import click

from agentmonitors.cli.common_options import host_option
from agentmonitors.transports.session_hooks import run_session_end


@click.command("end", help="SessionEnd hook: mark the session dormant. Always exits 0.")
@host_option
def end(host: str) -> int:
    return run_session_end(["--host", host])
