"""Claude Code's hooks on the host seam (see ``base``).

Events: ``SessionStart`` (register + recap, with ``source`` ``compact`` after a
compaction), ``UserPromptSubmit`` and ``PostToolUse`` (turn-interruptible), ``Stop``
(turn-idle, guarded by ``stop_hook_active``) and ``SessionEnd`` (dormancy). Every
output is ``hookSpecificOutput.additionalContext``: Claude Code hands a Stop hook's
context to the model and runs one more turn, whose Stop then carries
``stop_hook_active``. Nothing to say is empty stdout.
"""

from __future__ import annotations

from agentmonitors.delivery.host_process import record_current_session
from agentmonitors.delivery.vocabulary import CLAUDE_ADAPTER
from agentmonitors.transports.hosts.base import (
    HookPayload,
    HostAdapter,
    oversized,
    string_field,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import ClassVar

# A channel push shown by Claude Code becomes a user turn whose prompt is the tag:
# `<channel source="..." ... delivery_id="...">`. Only the opening tags are read.
MAX_CHANNEL_DELIVERIES = 16
_DELIVERY_ID = r'<channel\s[^>]*?\bdelivery_id="([0-9A-Za-z_-]{1,64})"'


def channel_delivery_ids(prompt: object) -> tuple[str, ...]:
    """The delivery ids of the channel tags a prompt consists of (none for a typed prompt)."""
    if not isinstance(prompt, str) or not prompt.lstrip().startswith("<channel"):
        return ()
    # Lazy: re costs every prompt an import; only a channel turn's tags need it.
    import re

    found = re.findall(_DELIVERY_ID, prompt)
    return tuple(dict.fromkeys(found))[:MAX_CHANNEL_DELIVERIES]


class ClaudeCode(HostAdapter):
    name = CLAUDE_ADAPTER
    title = "Claude Code"
    events: ClassVar[dict[str, tuple[str, ...]]] = {
        "UserPromptSubmit": ("turn-interruptible",),
        "PostToolUse": ("turn-interruptible",),
        "Stop": ("turn-idle",),
        "SessionStart": ("post-compact",),
    }
    session_start_event = "SessionStart"
    session_end_event = "SessionEnd"
    stop_event = "Stop"
    project_dir_env = "CLAUDE_PROJECT_DIR"

    def record_session_environment(self, host_session_id: str, environ: Mapping[str, str]) -> None:
        # After /clear the plugin's follower, started for the first session of this
        # process, finds the session its process runs now here (transports/follow_host.py).
        record_current_session(environ.get("CLAUDE_PID"), host_session_id)

    def normalise(self, data: Mapping[str, object]) -> HookPayload:
        raw = {name: data.get(name) for name in ("session_id", "hook_event_name", "cwd")}
        session_id, event, cwd = (
            value if isinstance(value, str) else None for value in raw.values()
        )
        if oversized(session_id, event, cwd):
            # One oversized identity field makes the whole payload untrustworthy.
            return HookPayload()
        return HookPayload(
            session_id=session_id or None,
            hook_event_name=event,
            cwd=cwd or None,
            stop_guard=data.get("stop_hook_active") is True,
            channel_delivery_ids=channel_delivery_ids(data.get("prompt"))
            if event == "UserPromptSubmit"
            else (),
            turn_id=string_field(data, "turn_id"),
            source=string_field(data, "source"),
        )


ADAPTER = ClaudeCode()
