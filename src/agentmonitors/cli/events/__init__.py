"""``agentmonitors events``: list a session's events, acknowledge them, follow them.

One module per command, imported when it runs (``cli/lazy_group.py``). ``list`` and
``ack`` are the agent's quick commands: ``cli/quick_commands.py`` runs a plain
invocation of them without click.
"""

from __future__ import annotations

import click

from agentmonitors.cli.lazy_group import LazyGroup, LazyTable

COMMANDS: LazyTable = {
    "ack": (
        "agentmonitors.cli.events.ack:ack",
        "Acknowledge events (all unread when --event-ids is omitted).",
    ),
    "follow": (
        "agentmonitors.cli.events.follow:follow",
        "Print one line per delivery for a session, live, until stopped: each line becomes a"
        " turn while a Claude Code session is idle.",
    ),
    "list": (
        "agentmonitors.cli.events.list:list_",
        "A session's events, newest first: at most 50 in toon and text unless --limit or"
        " --all says otherwise.",
    ),
}


@click.group(
    "events",
    cls=LazyGroup,
    lazy=COMMANDS,
    help="A session's events: list them, acknowledge them.",
)
def command() -> None:
    pass
