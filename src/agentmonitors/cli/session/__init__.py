"""``agentmonitors session``: register, list and close agent sessions.

``session start`` and ``session end`` are the SessionStart and SessionEnd hooks; the
entry point runs them before click is even imported, and these click commands (which
exist for ``--help``) call the same code.
"""

from __future__ import annotations

import click

from agentmonitors.cli.lazy_group import LazyGroup, LazyTable

# One module per command, imported when it runs (``cli/lazy_group.py``).
COMMANDS: LazyTable = {
    "close": (
        "agentmonitors.cli.session.close:close",
        "Mark a session dormant (it keeps its events).",
    ),
    "end": (
        "agentmonitors.cli.session.end:end",
        "SessionEnd hook: mark the session dormant. Always exits 0.",
    ),
    "list": (
        "agentmonitors.cli.session.list:list_",
        "Every session the daemon knows, most recently active first.",
    ),
    "open": (
        "agentmonitors.cli.session.open:open_",
        "Register (or resume) a session by its host session id.",
    ),
    "start": (
        "agentmonitors.cli.session.start:start",
        "SessionStart hook: boot the daemon, register, print the recap.",
    ),
}


@click.group(
    "session", cls=LazyGroup, lazy=COMMANDS, help="Agent sessions that receive deliveries."
)
def command() -> None:
    pass
