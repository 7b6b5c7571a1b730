"""The Codex CLI's hooks on the host seam (see ``base``).

Codex reads hooks from ``<project>/.codex/hooks.json`` in Claude Code's shape and sends
a payload of the same family: ``session_id`` (the thread), ``turn_id``, ``cwd``,
``hook_event_name``, plus ``source`` at SessionStart and ``stop_hook_active`` at Stop.

- ``SessionStart`` (``startup``, ``resume``, ``clear``, ``compact``): register + recap;
- ``UserPromptSubmit`` and ``PostToolUse``: turn-interruptible;
- ``Stop``: turn-idle. Codex turns ``{"decision": "block", "reason": R}`` into one more
  model request whose new user message carries R; that request's own Stop then has
  ``stop_hook_active`` true, and nothing is injected, so a stop never loops.

An idle thread is woken by the daemon with ``codex queue`` (the codex-queue transport,
``delivery/transports/codex_queue.py``) under the ``CODEX_HOME`` SessionStart recorded
for the thread (``delivery/codex_home.py``); the woken turn's UserPromptSubmit prompt is
our text, whose tag proves that delivery instead of repeating it.

``hookSpecificOutput.additionalContext`` reaches the model at the other three events
as a developer message. Codex has no SessionEnd: a Codex session goes dormant when it
has been idle long enough (the daemon's idle sweep). Nothing to say is empty stdout;
output that looks like JSON but does not parse would fail the hook, so every output is
built by one JSON encoder.
"""

from __future__ import annotations

from agentmonitors.delivery.codex_home import record_session_home
from agentmonitors.delivery.codex_queue_text import queued_delivery_ids
from agentmonitors.delivery.host_capabilities import UNREACHABLE
from agentmonitors.fastpath.jsonline import dumps
from agentmonitors.transports.hosts.base import (
    DEREGISTER,
    POINTS,
    HookPayload,
    HostAdapter,
    oversized,
    string_field,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import ClassVar

CODEX_ADAPTER = "codex"


class Codex(HostAdapter):
    name = CODEX_ADAPTER
    title = "Codex"
    events: ClassVar[dict[str, tuple[str, ...]]] = {
        "SessionStart": ("post-compact",),
        "UserPromptSubmit": ("turn-interruptible",),
        "PostToolUse": ("turn-interruptible",),
        "Stop": ("turn-idle",),
    }
    session_start_event = "SessionStart"
    session_end_event = None
    stop_event = "Stop"
    # Codex names no project folder in a hook's environment: the payload's cwd decides.
    project_dir_env = None
    reaches = frozenset(point for point in POINTS if point != DEREGISTER)
    instead: ClassVar[dict[str, str]] = UNREACHABLE["codex"]
    nothing = ""

    def normalise(self, data: Mapping[str, object]) -> HookPayload:
        session_id = string_field(data, "session_id")
        event = string_field(data, "hook_event_name")
        cwd = string_field(data, "cwd")
        turn_id = string_field(data, "turn_id")
        source = string_field(data, "source")
        if oversized(session_id, event, cwd, turn_id, source):
            # One oversized identity field makes the whole payload untrustworthy.
            return HookPayload()
        return HookPayload(
            session_id=session_id,
            hook_event_name=event,
            cwd=cwd,
            stop_guard=data.get("stop_hook_active") is True,
            turn_id=turn_id,
            source=source,
            # A turn we woke with `codex queue` (its prompt is our text): the hook proves
            # that delivery rather than delivering its events again.
            channel_delivery_ids=queued_delivery_ids(data.get("prompt"))
            if event == "UserPromptSubmit"
            else (),
        )

    def record_session_environment(self, host_session_id: str, environ: Mapping[str, str]) -> None:
        # The daemon probes and queues under the thread's own CODEX_HOME, which may
        # not be the one in the environment the daemon was started from.
        record_session_home(host_session_id, environ)

    def continue_after_stop(self, event_name: str | None, text: str) -> str:
        # Codex's Stop takes no additionalContext: blocking with a reason is what
        # makes it ask the model once more, with the reason as the new user message.
        del event_name
        return dumps({"decision": "block", "reason": text})


ADAPTER = Codex()
