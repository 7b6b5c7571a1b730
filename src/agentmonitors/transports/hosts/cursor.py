"""Cursor's hooks (the IDE agent and the ``cursor-agent`` CLI) on the host seam.

Cursor reads ``.cursor/hooks.json`` (see ``cursor_install``) and runs, for us:

- ``sessionStart`` → ``session start --host cursor``: register, then the recap as
  ``{"additional_context": ...}``;
- ``stop`` → ``hook deliver --host cursor``: ``{"followup_message": ...}``, which Cursor
  sends as the next user message. Cursor shows no tool-call context to the model
  (``postToolUse``'s ``additional_context`` never reaches it), so the stop also
  carries what a tool call would have: it tries ``turn-interruptible`` first, then
  ``turn-idle``. ``loop_count`` counts the follow-ups already sent in a row; at
  :data:`LOOP_LIMIT` the stop says nothing, and a stop that did not complete
  (aborted, error) never triggers one;
- ``sessionEnd`` → ``session end --host cursor``: dormancy.

Every field is read from the documented payload: ``conversation_id`` (newer builds
also send ``session_id``; the conversation id is in every build, so it is the one
that stays stable), ``generation_id``, ``hook_event_name``, ``workspace_roots``,
``status`` and ``loop_count``. No output is ``{}``.
"""

from __future__ import annotations

from agentmonitors.delivery.host_capabilities import UNREACHABLE
from agentmonitors.fastpath.jsonline import dumps
from agentmonitors.transports.hosts.base import (
    DEREGISTER,
    POST_COMPACT,
    REGISTER,
    TURN_IDLE,
    TURN_INTERRUPTIBLE,
    HookPayload,
    HostAdapter,
    oversized,
    string_field,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import ClassVar

LOOP_LIMIT = 2
"""Follow-ups in a row: one for what the turn left pending, one for what arrived while
the agent handled it. Written as the stop hook's ``loop_limit`` too."""


def _first_root(data: Mapping[str, object]) -> str | None:
    roots = data.get("workspace_roots")
    if isinstance(roots, list) and roots and isinstance(roots[0], str) and roots[0]:
        return roots[0]
    return string_field(data, "cwd")


def _loop_count(data: Mapping[str, object]) -> int:
    value = data.get("loop_count")
    # bool is an int to Python, but not a count.
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


class Cursor(HostAdapter):
    name = "cursor"
    title = "Cursor"
    events: ClassVar[dict[str, tuple[str, ...]]] = {
        "stop": (TURN_INTERRUPTIBLE, TURN_IDLE),
        "sessionStart": (POST_COMPACT,),
    }
    session_start_event = "sessionStart"
    session_end_event = "sessionEnd"
    stop_event = "stop"
    project_dir_env = "CURSOR_PROJECT_DIR"
    reaches = frozenset((REGISTER, TURN_IDLE, DEREGISTER))
    instead: ClassVar[dict[str, str]] = UNREACHABLE["cursor"]
    nothing = "{}"

    def normalise(self, data: Mapping[str, object]) -> HookPayload:
        session_id = string_field(data, "conversation_id") or string_field(data, "session_id")
        event = data.get("hook_event_name")
        event = event if isinstance(event, str) else None
        cwd = _first_root(data)
        if oversized(session_id, event, cwd):
            return HookPayload()
        status = data.get("status")
        finished = status is None or status == "completed"
        return HookPayload(
            session_id=session_id,
            hook_event_name=event,
            cwd=cwd,
            stop_guard=not finished or _loop_count(data) >= LOOP_LIMIT,
            turn_id=string_field(data, "generation_id"),
            source=string_field(data, "source"),
        )

    def inject(self, event_name: str | None, text: str) -> str:
        del event_name
        return dumps({"additional_context": text})

    def continue_after_stop(self, event_name: str | None, text: str) -> str:
        del event_name
        return dumps({"followup_message": text})


ADAPTER = Cursor()
