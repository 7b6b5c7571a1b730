"""When a monitor's held observations are next due out, from its notify state.

The tick wakes the daemon then (a debounce's settle window ending, a rollup's next
window), whether or not the monitor's source is due.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentmonitors.clock import ms_from_iso
from agentmonitors.monitor.cron import next_cron_fire_ms
from agentmonitors.monitor.policy import RollupPolicy
from agentmonitors.runtime.notify import NotifyConfig


def settle_due_ms(notify_state: Mapping[str, Any]) -> int | None:
    """When a held debounce batch is due, from a monitor's notify state."""
    pending = notify_state.get("pendingDebounce") if isinstance(notify_state, dict) else None
    if not isinstance(pending, dict):
        return None
    due = ms_from_iso(str(pending.get("dueAt", "")))
    return 0 if due is None else due


def pacing_due_ms(
    notify: NotifyConfig | None, notify_state: Mapping[str, Any], now: int
) -> int | None:
    """When held observations are next due out: a debounce's end, a rollup's next window."""
    if not isinstance(notify, RollupPolicy):
        return settle_due_ms(notify_state)
    if not isinstance(notify_state, dict) or "pendingRollup" not in notify_state:
        return None  # an empty window only stamps its minute: nothing to wake for
    try:
        return next_cron_fire_ms(notify.window, notify.timezone or "UTC", now)
    except ValueError:
        return None
