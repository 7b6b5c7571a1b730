"""What ``monitor history`` and ``monitor explain`` share: the daemon's answer, or the store's.

A daemon that does not answer (none runs, or it is busy) leaves the persisted state to
read, with a notice saying which.
"""

from __future__ import annotations

import os
from typing import Any

from agentmonitors.daemon.client import DaemonConnectionError, call
from agentmonitors.diagnosis.explain_stages import start_hint
from agentmonitors.monitor.discovery import discover
from agentmonitors.store.database import Database, is_memory

OFFLINE_NOTICE = "No daemon running — showing persisted state from the last tick."
NEVER_OBSERVED_NOTICE = (
    "No daemon running, and nothing is stored for this monitor yet — showing its definition"
    " and schedule."
)
BUSY_NOTICE = (
    "The daemon did not answer in time (it may be busy) — showing persisted state from the"
    " last tick."
)


class Unanswered:
    """No answer from the daemon: none runs there, or it did not answer in time."""

    def __init__(self, timed_out: bool) -> None:
        self.notice = BUSY_NOTICE if timed_out else OFFLINE_NOTICE


def nothing_persisted(socket_path: str) -> str:
    """What to do when a daemon did not answer in time and the database has nothing."""
    return (
        f"The daemon at {socket_path} did not answer in time (it may be busy) and there is"
        " no persisted state to show. Try again, and run `agentmonitors daemon status` if"
        " it keeps happening."
    )


def no_history_notice(workspace: str) -> str:
    return f"No daemon running, and nothing has been observed here yet: {start_hint(workspace)}."


def ask_daemon(socket_path: str, method: str, params: dict[str, Any]) -> Any:
    """The daemon's answer, or ``Unanswered`` when none comes (the caller reads the store).

    Any other failure (an application error, an older daemon) is raised.
    """

    try:
        return call(socket_path, method, params)
    except DaemonConnectionError as error:
        return Unanswered(error.timed_out)


def open_existing(db_path: str) -> Any:
    """The workspace database if it exists; never creates one just to find it empty."""
    if is_memory(db_path) or not os.path.exists(db_path):
        return None
    return Database(db_path)


def unknown_id(monitor_id: str, workspace: str) -> str | None:
    """The error for an id no monitor file defines, or None when one does.

    Called only when the id has no stored history: an id with history is known
    even after its file is gone.
    """

    scan = discover(workspace)
    ids = {monitor.id for monitor in scan.monitors} | {
        failure.id for failure in scan.errors if failure.id is not None
    }
    if monitor_id in ids:
        return None
    listing = f"known ids: {', '.join(sorted(ids))}" if ids else "the project defines no monitors"
    return (
        f'Unknown monitor id "{monitor_id}": no monitor file defines it and it has no'
        f" history ({listing})."
    )
