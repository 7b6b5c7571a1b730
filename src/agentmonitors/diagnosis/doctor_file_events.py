"""What ``doctor`` and ``daemon status`` say about the daemon's file events.

The state is the daemon's ``fileEvents`` (``sources/file_hints.py`` and
``sources/file_events_inotify.py``): the backend, whether every watched folder has a
watch (``events``) or some are rescanned instead (``rescanning``), and queue overflows.
Rescanning misses nothing (see docs/architecture.md, "Notice"): it is shown, not failed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

RAISE_LIMIT = (
    "raise the watch limit (e.g. `sudo sysctl fs.inotify.max_user_watches=524288`), or narrow"
    " the monitors' globs; file events resume by themselves once watches can be added"
)

GONE = (
    "none needed: a watched folder that was moved or deleted is watched again once it is back,"
    " or the daemon moves the watch to what the monitors' globs name now at its next tick"
)
RESTART = (
    "fix the cause named here, then `agentmonitors daemon stop` (the next session starts it"
    " again); meanwhile each monitor's interval still finds every change"
)


def file_events_text(state: Mapping[str, Any]) -> str:
    """One line: how file changes reach the daemon now."""
    backend = state.get("backend")
    mode = state.get("mode")
    problem = state.get("problem")
    if mode == "rescanning":
        examples = ", ".join(state.get("unwatchedExamples") or [])
        text = (
            f"{backend}, rescanning {state.get('unwatchedFolders', 0)} folder(s) without a watch"
            f" (such as {examples}): {problem}"
        )
    elif backend and not problem:
        watches = state.get("watches")
        text = f"{backend}, event-driven"
        if watches is not None:
            text += f" ({watches} watch(es))"
    elif problem:
        text = f"off: {problem}"
    else:
        text = "nothing to watch"
    overflows = state.get("overflows") or 0
    if overflows:
        text += (
            f"; the event queue overflowed {overflows} time(s), last at"
            f" {state.get('lastOverflowAt')} (the watched folders were rescanned)"
        )
    return text


def file_events_check(state: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The ``file-events`` check, when a running daemon reported its state."""
    if not state:
        return []
    remediation: str | None = None
    if state.get("mode") == "rescanning":
        remediation = RAISE_LIMIT if state.get("limited") else GONE
    elif not state.get("available", True):
        remediation = RESTART
    return [
        {
            "name": "file-events",
            "status": "pass" if remediation is None else "idle",
            "detail": file_events_text(state),
            "remediation": remediation,
        }
    ]
