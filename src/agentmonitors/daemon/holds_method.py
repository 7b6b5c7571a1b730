"""``monitor.pacing``: the observations a monitor's ``notify`` pacing holds back now.

``hook deliver --debug`` lists every hold between a change and a session: the
delivery's (``hook.diagnose``) and, before any event exists, these.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentmonitors.daemon.server import Method, params
from agentmonitors.diagnosis.pacing import pacing_holds
from agentmonitors.diagnosis.watches import with_watches

if TYPE_CHECKING:
    from agentmonitors.clock import Clock
    from agentmonitors.runtime.tick import Runtime
    from agentmonitors.store.database import Database


def pacing_method(runtime: Runtime, db: Database, clock: Clock) -> Method:
    async def handler(request: dict[str, Any]) -> Any:
        cache = runtime.definitions
        definitions = with_watches(
            cache.load(runtime.workspace, runtime.monitors_dir), cache, db, runtime.workspace
        )
        holds = pacing_holds(
            db, definitions, runtime.workspace, clock.now_ms(), request.get("sessionId")
        )
        return {"holds": holds}

    return Method(handler, params(sessionId=(str, False)))
