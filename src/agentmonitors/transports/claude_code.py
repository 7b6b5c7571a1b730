"""Claude Code names the rest of the package still imports from here.

The hook side (payload, event names, output) lives on the Claude Code host adapter,
:mod:`agentmonitors.transports.hosts.claude_code`; these names forward to it. The
channel side (the environment an MCP server Claude Code starts gets, the capability a
channel server declares, and the notification a push is) is Claude Code's alone.
Standard library only: this runs before every prompt and after every tool call.
"""

from __future__ import annotations

from agentmonitors.delivery.vocabulary import CLAUDE_ADAPTER
from agentmonitors.transports.hosts.base import MAX_FIELD_BYTES, HookPayload
from agentmonitors.transports.hosts.claude_code import (
    ADAPTER as HOST,
)
from agentmonitors.transports.hosts.claude_code import (
    MAX_CHANNEL_DELIVERIES,
    channel_delivery_ids,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from agentmonitors.workspace import LocalState

__all__ = [
    "ADAPTER",
    "CHANNEL_CAPABILITY",
    "CHANNEL_NOTIFICATION",
    "HOST",
    "KEPT_FIELDS",
    "LIFECYCLE_BY_EVENT",
    "MAX_CHANNEL_DELIVERIES",
    "MAX_FIELD_BYTES",
    "SESSION_ENV",
    "HookPayload",
    "channel_delivery_ids",
    "hook_output",
    "lifecycle_for",
    "parse_payload",
    "payload_project",
    "read_payload",
]

KEPT_FIELDS = ("session_id", "hook_event_name", "cwd")
LIFECYCLE_BY_EVENT = {event: lifecycles[0] for event, lifecycles in HOST.events.items()}
ADAPTER = CLAUDE_ADAPTER
"""The adapter name sessions opened by these hooks are registered under."""

SESSION_ENV = "CLAUDE_CODE_SESSION_ID"
CHANNEL_CAPABILITY = "claude/channel"
CHANNEL_NOTIFICATION = "notifications/claude/channel"


def lifecycle_for(payload: HookPayload, override: str | None) -> str | None:
    """The lifecycle a hook delivers for: the override, else the event's; None for none."""
    found = HOST.lifecycles(payload, override)
    return found[0] if found else None


def hook_output(event_name: str | None, context: str) -> str:
    """The compact stdout JSON Claude Code reads."""
    return HOST.output(event_name, context)


def parse_payload(raw: str | bytes) -> HookPayload:
    """Parse stdin text; empty, bad JSON or a non-object gives an empty payload."""
    return HOST.parse(raw)


def read_payload() -> HookPayload:
    """Read all of stdin (never block on a terminal)."""
    return HOST.read()


def payload_project(payload: HookPayload) -> tuple[str, LocalState]:
    """The enabled project a Claude Code hook acts on (see ``HostAdapter.project``)."""
    return HOST.project(payload)
