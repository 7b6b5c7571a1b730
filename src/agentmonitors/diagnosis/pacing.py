"""The holds before an event exists: a monitor's ``notify`` pacing (debounce, rollup,
throttle) keeping observations back, as ``monitor explain`` and ``hook deliver --debug``
name them.

The holds after (settle window, claimed reminder, lease, context cap) are the
delivery's (``diagnosis/holds.py``). Nothing here writes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from agentmonitors.clock import iso_from_ms, ms_from_iso
from agentmonitors.diagnosis.watches import watch_session
from agentmonitors.monitor.cron import next_cron_fire_ms
from agentmonitors.monitor.policy import MonitorDefinition
from agentmonitors.runtime.notify import pending_count
from agentmonitors.store import queries

if TYPE_CHECKING:
    from agentmonitors.catalog.definitions import Definitions
    from agentmonitors.store.database import Database


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def notify_hold(
    state: Mapping[str, Any], authored: Mapping[str, Any] | None, now_ms: int
) -> dict[str, Any] | None:
    """The pacing hold in a monitor's notify state now: ``kind``, ``reason`` and its
    details; None when nothing is held."""
    held = pending_count(dict(state))
    debounce = state.get("pendingDebounce")
    if isinstance(debounce, dict) and held:
        due_text = str(debounce.get("dueAt", ""))
        due_at = ms_from_iso(due_text)
        overdue = due_at is None or due_at <= now_ms
        if overdue:
            reason = (
                f"The debounce settle window has elapsed; {_plural(held, 'held observation')} "
                "flush on the next evaluation of this monitor."
            )
        else:
            reason = f"Debounce is holding {_plural(held, 'observation')} until {due_text}."
        return {
            "kind": "debounce",
            "reason": reason,
            "observations": held,
            "dueAt": due_text or None,
            "overdue": overdue,
        }
    rollup = state.get("pendingRollup")
    if isinstance(rollup, dict) and held:
        window = authored.get("window") if authored else None
        timezone = (authored.get("timezone") if authored else None) or "UTC"
        fires = _window_fire_ms(window, timezone, now_ms) if isinstance(window, str) else None
        when = f" (next at {iso_from_ms(fires)})" if fires is not None else ""
        return {
            "kind": "rollup",
            "reason": f"Rollup is holding {_plural(held, 'observation')} until the next window "
            f"'{window}'{when}.",
            "observations": held,
            "window": window,
            "nextWindowAt": None if fires is None else iso_from_ms(fires),
        }
    until_text = state.get("suppressedUntil")
    until = ms_from_iso(str(until_text)) if until_text is not None else None
    if until is not None and until > now_ms:
        return {
            "kind": "throttle",
            "reason": f"Throttle is dropping new observations until {iso_from_ms(until)}.",
            "suppressedUntil": iso_from_ms(until),
        }
    return None


def _window_fire_ms(window: str, timezone: str, now: int) -> int | None:
    """The rollup window's next firing: this minute's if it matches, else the next one."""
    try:
        return next_cron_fire_ms(window, timezone, now - now % 60_000 - 1)
    except ValueError:
        return None


def pacing_holds(
    db: Database,
    definitions: Definitions,
    workspace: str,
    now_ms: int,
    session_id: str | None = None,
) -> list[dict[str, Any]]:
    """Every runnable monitor whose pacing holds something back now, with the hold.

    With ``session_id``, another session's watches are left out: their events would
    never reach this one.
    """
    holds: list[dict[str, Any]] = []
    with db.read() as conn:
        for monitor in definitions.runnable:
            declared_by = watch_session(monitor.id)
            if session_id is not None and declared_by not in (None, session_id):
                continue
            state = queries.load_monitor_state(conn, monitor.id, workspace, with_source_state=False)
            if state is None:
                continue
            hold = notify_hold(state.notify_state, _authored(monitor), now_ms)
            if hold is not None:
                holds.append({"monitorId": monitor.id, **hold})
    return holds


def _authored(monitor: MonitorDefinition) -> dict[str, Any] | None:
    authored = monitor.notify_as_authored()
    return dict(authored) if authored else None
