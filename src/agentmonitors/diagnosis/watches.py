"""The agent-declared watches beside the ``MONITOR.md`` monitors, for ``explain`` and ``doctor``.

A watch runs through the same pipeline as a monitor file (docs/architecture.md,
"Agent-declared watches"), so the diagnosis reads it the same way: the definitions a
tick would run are the files plus the workspace's active watches.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentmonitors.catalog.definitions import DefinitionCache, Definitions
from agentmonitors.runtime.ephemeral import EphemeralDefinitions
from agentmonitors.store.ephemeral import is_ephemeral

if TYPE_CHECKING:
    from agentmonitors.store.database import Database


def with_watches(
    definitions: Definitions, cache: DefinitionCache, db: Database | None, workspace: str
) -> Definitions:
    """``definitions`` plus the workspace's active watches, as the next tick has them."""
    if db is None:
        return definitions
    return EphemeralDefinitions(cache.registry).merged(definitions, db, workspace, cache)


def watch_session(monitor_id: str) -> str | None:
    """The session that declared the watch ``monitor_id``; None for a monitor file."""
    if not is_ephemeral(monitor_id):
        return None
    return monitor_id.split(":", 1)[1].split("/", 1)[0] or None


def missing_watch_reason(monitor_id: str) -> str:
    """Why explain finds no watch of this id, and how to see the ones there are."""
    session = watch_session(monitor_id) or "<session id>"
    return (
        f'No active watch "{monitor_id}" in this workspace: a watch ends when it is '
        "cancelled or its session ends. `agentmonitors watch list --session "
        f"{session}` lists that session's active watches."
    )


def watch_fix(monitor_id: str) -> str:
    """The remedy for a watch that no longer runs: its session cancels and declares again."""
    session = watch_session(monitor_id) or "<session id>"
    return (
        f"the declaring session cancels it (`agentmonitors watch cancel {monitor_id} --session"
        f" {session}`) and declares it again"
    )
