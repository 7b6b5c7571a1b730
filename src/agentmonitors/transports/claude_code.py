"""Everything specific to Claude Code's hooks: the payload on stdin, the event names
it maps to delivery lifecycles, and the JSON printed back on stdout.

A transport for another host adds its own module beside this one; the delivery path
(:mod:`agentmonitors.transports.handoff`) knows nothing of any host's shapes.
Standard library only: this runs before every prompt and after every tool call.
"""

from __future__ import annotations

import sys

from agentmonitors.delivery.jsonline import dumps, loads
from agentmonitors.delivery.vocabulary import CLAUDE_ADAPTER
from agentmonitors.paths import session_marker

# ``typing`` stays out of the run-time imports: the hook path pays for each one.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from agentmonitors.workspace import LocalState

# A field longer than this is not a real hook payload; registering it would slow
# every later hook (the reference registers a 1 MB session id as is).
MAX_FIELD_BYTES = 4096
KEPT_FIELDS = ("session_id", "hook_event_name", "cwd")

LIFECYCLE_BY_EVENT = {
    "UserPromptSubmit": "turn-interruptible",
    "PostToolUse": "turn-interruptible",
    "SessionStart": "post-compact",
    "Stop": "turn-idle",
}
ADAPTER = CLAUDE_ADAPTER
"""The adapter name sessions opened by these hooks are registered under."""

# The channel side of Claude Code: the environment an MCP server it starts gets, the
# capability a channel server declares, and the notification a push is.
SESSION_ENV = "CLAUDE_CODE_SESSION_ID"
CHANNEL_CAPABILITY = "claude/channel"
CHANNEL_NOTIFICATION = "notifications/claude/channel"


# A channel push shown by Claude Code becomes a user turn whose prompt is the tag:
# `<channel source="..." ... delivery_id="...">`. Only the opening tags are read.
MAX_CHANNEL_DELIVERIES = 16
_DELIVERY_ID = r'<channel\s[^>]*?\bdelivery_id="([0-9A-Za-z_-]{1,64})"'


def lifecycle_for(payload: HookPayload, override: str | None) -> str | None:
    """The lifecycle a hook delivers for: the override, else the event's; None for none."""
    if override is not None:
        return override
    if payload.hook_event_name == "Stop" and payload.stop_hook_active:
        # Claude is already continuing because of a Stop hook: never loop it again.
        return None
    return LIFECYCLE_BY_EVENT.get(payload.hook_event_name or "")


def hook_output(event_name: str | None, context: str) -> str:
    """The compact stdout JSON Claude Code reads.

    The same shape serves every hook we wire, Stop included: Claude Code hands a
    Stop hook's additionalContext to the model and runs one more turn (the next
    Stop then carries stop_hook_active, which is why that case injects nothing).
    """
    body = {
        "continue": True,
        "hookSpecificOutput": {"hookEventName": event_name or "", "additionalContext": context},
    }
    return dumps(body)


class HookPayload:
    """The few fields we use; anything missing, non-string or oversized is None."""

    __slots__ = (
        "channel_delivery_ids",
        "cwd",
        "hook_event_name",
        "session_id",
        "stop_hook_active",
    )

    def __init__(
        self,
        session_id: str | None = None,
        hook_event_name: str | None = None,
        cwd: str | None = None,
        stop_hook_active: bool = False,
        channel_delivery_ids: tuple[str, ...] = (),
    ) -> None:
        self.session_id = session_id
        self.hook_event_name = hook_event_name
        self.cwd = cwd
        self.stop_hook_active = stop_hook_active
        self.channel_delivery_ids = channel_delivery_ids


def channel_delivery_ids(prompt: object) -> tuple[str, ...]:
    """The delivery ids of the channel tags a prompt consists of (none for a typed prompt)."""
    if not isinstance(prompt, str) or not prompt.lstrip().startswith("<channel"):
        return ()
    import re  # compiled only for a channel turn, not on every prompt

    found = re.findall(_DELIVERY_ID, prompt)
    return tuple(dict.fromkeys(found))[:MAX_CHANNEL_DELIVERIES]


def _oversized(value: str | None) -> bool:
    return value is not None and len(value.encode("utf-8", "surrogatepass")) > MAX_FIELD_BYTES


def parse_payload(raw: str | bytes) -> HookPayload:
    """Parse stdin text; empty, bad JSON or a non-object gives an empty payload."""
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8", "replace")
    if not raw.strip():
        return HookPayload()
    try:
        data = loads(raw)
    except (ValueError, RecursionError):
        return HookPayload()
    if not isinstance(data, dict):
        return HookPayload()
    fields: dict[str, str | None] = {}
    for name in KEPT_FIELDS:
        value = data.get(name)
        fields[name] = value if isinstance(value, str) else None
    if any(_oversized(value) for value in fields.values()):
        # One oversized identity field makes the whole payload untrustworthy.
        return HookPayload()
    return HookPayload(
        session_id=fields["session_id"] or None,
        hook_event_name=fields["hook_event_name"],
        cwd=fields["cwd"] or None,
        stop_hook_active=data.get("stop_hook_active") is True,
        channel_delivery_ids=channel_delivery_ids(data.get("prompt"))
        if fields["hook_event_name"] == "UserPromptSubmit"
        else (),
    )


def read_payload() -> HookPayload:
    """Read all of stdin (never block on a terminal)."""
    stream = sys.stdin
    if stream is None:
        return HookPayload()
    try:
        if stream.isatty():
            return HookPayload()
        return parse_payload(stream.buffer.read() if hasattr(stream, "buffer") else stream.read())
    except (OSError, ValueError):
        return HookPayload()


def payload_project(payload: HookPayload) -> tuple[str, LocalState]:
    """The enabled project a hook acts on, and its enable-file state.

    Found by walking up from the payload's ``cwd`` (which follows the agent's ``cd``),
    falling back to ``$CLAUDE_PROJECT_DIR``; a project where this session is already
    registered wins over a nearer enabled one (see ``resolve_enabled_project``). When
    nothing is enabled, the state says so and the path is where the search started.
    """
    from agentmonitors.workspace import resolve_enabled_project

    marker = session_marker(payload.session_id) if payload.session_id else None
    return resolve_enabled_project(payload.cwd, marker)
