"""``monitor.blocked``: which monitors wait for the user's approval, for the hooks.

The hooks stay standard library only and never parse a monitor; the daemon, which
already holds the parsed definitions, answers with ids and one-line summaries.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentmonitors.daemon.server import Method, params

if TYPE_CHECKING:
    from agentmonitors.runtime.tick import Runtime


def blocked_monitors(runtime: Runtime) -> list[dict[str, str]]:
    """The blocked monitors as the definitions on disk stand now (not as of the last tick).

    A session that starts right after the daemon booted asks before the first tick.
    """
    definitions = runtime.definitions.load(runtime.workspace, runtime.monitors_dir)
    return [
        {
            "monitorId": blocked.monitor.id,
            "sourceName": blocked.monitor.source_name,
            "summary": blocked.requirement.summary(),
        }
        for blocked in definitions.blocked
    ]


def blocked_method(runtime: Runtime) -> Method:
    async def handler(_: dict[str, Any]) -> Any:
        return {"blocked": blocked_monitors(runtime)}

    return Method(handler, params())
