"""The MCP channel tag's ``meta`` for a ``DeliveryClaim``.

See docs/architecture.md, "Text and sizes". Standard library only, nothing imported at
module level: it renders beside the transports' text.
"""

from __future__ import annotations

from agentmonitors.delivery.text import sanitize_meta

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    Claim = Mapping[str, Any]

__all__ = ["channel_meta"]


def _text(mapping: Mapping[str, Any], key: str) -> str:
    value = mapping.get(key)
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def channel_meta(claim: Claim) -> dict[str, str]:
    """The channel tag's ``meta``: string values, ``[A-Za-z0-9_]`` keys, all sanitized."""
    raw = claim.get("events")
    events = list(raw) if isinstance(raw, list | tuple) else []
    coalesced = bool(claim.get("coalescedReminder"))
    if coalesced:
        count = len(events) + _int(claim.get("coalescedNormalCount"))
    elif events:
        count = len(events)
    else:
        counts = claim.get("unreadCounts")
        count = _int(counts.get("total")) if isinstance(counts, dict) else 0
    meta = {
        "lifecycle": _text(claim, "lifecycle"),
        "mode": _text(claim, "mode"),
        "event_count": str(count),
    }
    if claim.get("urgency"):
        meta["urgency"] = _text(claim, "urgency")
    # A scoped ack of one event would strand coalesced normal rows: only route a lone event.
    if len(events) == 1 and not coalesced:
        meta["monitor_id"] = _text(events[0], "monitorId")
        meta["event_id"] = _text(events[0], "eventId")
    return {key: sanitize_meta(value) for key, value in meta.items()}


def _int(value: object) -> int:
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return value
    try:
        return int(str(value))
    except ValueError:
        return 0
