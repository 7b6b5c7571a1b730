"""The workspace's active agent-declared watches, as definitions a tick runs.

They are read from the store on every tick (so a restart re-arms exactly the ones
still active, and a reaped one is never seen again) and join the file monitors:
same scheduling, observation, pacing and materialization. Who receives their events
is delivery's business, not the runtime's.
"""

from __future__ import annotations

from agentmonitors.catalog.definitions import DefinitionCache, Definitions, Problem
from agentmonitors.fastpath.lazy_logging import get_logger
from agentmonitors.monitor.policy import MonitorDefinition
from agentmonitors.sources.base import SourceRegistry
from agentmonitors.store.database import Database
from agentmonitors.store.ephemeral import EphemeralRow, active_of_workspace

log = get_logger("agentmonitors.runtime")


class EphemeralDefinitions:
    """Builds each stored watch's definition once and keeps it while the row is unchanged.

    Keeping the same object tick after tick lets the per-definition caches of the
    runtime (the paths a monitor may read) work for watches as for files.
    """

    def __init__(self, registry: SourceRegistry) -> None:
        self.registry = registry
        self._built: dict[str, tuple[EphemeralRow, MonitorDefinition | Problem]] = {}

    def _build(self, row: EphemeralRow) -> MonitorDefinition | Problem:
        cached = self._built.get(row.id)
        if cached is not None and cached[0] == row:
            return cached[1]
        built: MonitorDefinition | Problem
        if not self.registry.has(row.source_name):
            # Its package was uninstalled since the declaration: reported every tick,
            # like a file monitor naming an unknown source, until it is cancelled.
            built = Problem(
                row.id,
                f'Unknown source "{row.source_name}". Available sources: '
                f"{', '.join(self.registry.names())}",
                "",
                row.source_name,
            )
        else:
            try:
                # Lazy: the watch validator costs a tick 3 ms; most ticks have no watch declared.
                from agentmonitors.catalog.ephemeral import watch_definition

                built = watch_definition(
                    row.id,
                    row.source_name,
                    row.scope,
                    row.band,
                    row.instruction,
                    row.display_name,
                )
            except ValueError as error:
                built = Problem(row.id, str(error), "", row.source_name)
        self._built[row.id] = (row, built)
        return built

    def merged(
        self, definitions: Definitions, db: Database, workspace: str, cache: DefinitionCache
    ) -> Definitions:
        """``definitions`` plus the workspace's active watches (runnable, blocked or problems).

        A watch passes the same approval as a ``MONITOR.md`` (``cache.admit``): one that
        runs a command, fetches a URL or reads outside the workspace waits for the user's
        ``monitor approve <watch id>``.
        """
        try:
            with db.read() as conn:
                rows = active_of_workspace(conn, workspace)
        except Exception:
            # The file monitors still run this tick; the watches are read again next one.
            log.warning("could not read the agent-declared watches", exc_info=True)
            return definitions
        live = {row.id for row in rows}
        for gone in [monitor_id for monitor_id in self._built if monitor_id not in live]:
            del self._built[gone]
            cache.forget_watch(gone)
        if not rows:
            return definitions
        runnable = list(definitions.runnable)
        problems = list(definitions.problems)
        blocked = list(definitions.blocked)
        for row in rows:
            built = self._build(row)
            if isinstance(built, Problem):
                problems.append(built)
            else:
                cache.admit(built, workspace, runnable, problems, blocked)
        return Definitions(tuple(runnable), tuple(problems), tuple(blocked))
