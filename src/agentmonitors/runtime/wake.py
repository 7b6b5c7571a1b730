"""When a monitor's held observations are next due out, from its notify state.

The tick wakes the daemon then (a debounce's settle window ending, a rollup's next
window), whether or not the monitor's source is due.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentmonitors.monitor.cron import next_cron_fire_ms
from agentmonitors.monitor.policy import RollupPolicy
from agentmonitors.runtime.notify import NotifyConfig, debounce_due_ms


def settle_due_ms(notify_state: Mapping[str, Any], now: int) -> int | None:
    """When a held debounce batch is due, from a monitor's notify state (``now`` when the
    wall clock was set back under it: ``runtime/notify.py``, ``debounce_due_ms``)."""
    if not isinstance(notify_state, dict):
        return None
    return debounce_due_ms(notify_state, now)


def pacing_due_ms(
    notify: NotifyConfig | None, notify_state: Mapping[str, Any], now: int
) -> int | None:
    """When held observations are next due out: a debounce's end, a rollup's next window."""
    if not isinstance(notify, RollupPolicy):
        return settle_due_ms(notify_state, now)
    if not isinstance(notify_state, dict) or "pendingRollup" not in notify_state:
        return None  # an empty window only stamps its minute: nothing to wake for
    try:
        return next_cron_fire_ms(notify.window, notify.timezone or "UTC", now)
    except ValueError:
        return None
