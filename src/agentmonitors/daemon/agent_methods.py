"""``agent.snapshot|diff|summary|inspect``: the agent's read-only verbs, served by the daemon.

The daemon answers with its own clock and its in-flight leases (which only it knows),
so ``inspect`` sees a reservation surfacing rows right now. Nothing here writes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agentmonitors.daemon.server import Method, ParamDeclaration, ParamSpec, RequestError, params
from agentmonitors.diagnosis.agent_verbs import METHODS, AgentViewError, answer

if TYPE_CHECKING:
    from agentmonitors.clock import Clock
    from agentmonitors.store.database import Database


# How much a verb lists: at most ``limit`` items (``all``: every one, or a diff whole);
# ``offset`` pages through a long snapshot.
_COUNT = ParamSpec(type="int", minimum=1)
_LISTING: dict[str, dict[str, ParamDeclaration]] = {
    "inspect": {"limit": _COUNT, "all": (bool, False)},
    "summary": {"limit": _COUNT, "all": (bool, False)},
    "snapshot": {"offset": ParamSpec(type="int", minimum=0)},
    "diff": {"all": (bool, False)},
}


def agent_methods(
    db: Database,
    clock: Clock,
    *,
    workspace: str,
    socket_path: str,
    leased: Callable[[str], frozenset[str]],
) -> dict[str, Method]:
    def method(verb: str) -> Method:
        async def handler(request: dict[str, Any]) -> Any:
            asked = request.get("workspacePath", workspace)
            if asked != workspace:
                raise RequestError(f"this daemon serves {workspace}, not {asked}")
            try:
                return answer(
                    db,
                    verb,
                    request,
                    workspace=workspace,
                    now_ms=clock.now_ms(),
                    leased=leased,
                    socket_path=socket_path,
                )
            except AgentViewError as error:
                raise RequestError(str(error)) from None

        return Method(
            handler,
            params(
                workspacePath=(str, False),
                monitorId=(str, verb != "inspect"),
                objectKey=(str, verb == "diff"),
                # Where the asker stands: a relative --object is read from there first.
                cwd=(str, False),
                sessionId=(str, False),
                **({"from": (str, False), "to": (str, False)} if verb == "diff" else {}),
                **_LISTING.get(verb, {}),
            ),
        )

    return {name: method(verb) for verb, name in METHODS.items()}
