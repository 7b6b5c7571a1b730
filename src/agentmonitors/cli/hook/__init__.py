"""``agentmonitors hook``: deliver at an agent host's hook, or claim by hand.

One module per command, imported when it runs (``cli/lazy_group.py``); a plain
``hook deliver`` runs without click (``cli/main.py``).
"""

from __future__ import annotations

import click

from agentmonitors.cli.lazy_group import LazyGroup, LazyTable

COMMANDS: LazyTable = {
    "claim": (
        "agentmonitors.cli.hook.claim:claim",
        "Claim a delivery by hand (marks rows claimed, never acknowledged).",
    ),
    "deliver": (
        "agentmonitors.cli.hook.deliver:deliver",
        "Agent host hook (Claude Code: UserPromptSubmit, PostToolUse, Stop, SessionStart;"
        " see --host for the others): read the payload on stdin and print what the agent"
        " should see.",
    ),
    "rewake": (
        "agentmonitors.cli.hook.rewake:rewake",
        "Claude Code Stop hook run with asyncRewake: in a headless stream-json session,"
        " wait in the background for the session's next delivery and exit 2 with it on"
        " stderr (a new turn).",
    ),
}


@click.group("hook", cls=LazyGroup, lazy=COMMANDS, help="Deliveries at agent hooks.")
def command() -> None:
    pass
