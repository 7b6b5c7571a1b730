"""Which session a Claude Code process runs now, recorded at each SessionStart.

See docs/architecture.md, "Live updates". ``/clear`` ends a session and starts another
in the same Claude Code process (a new session id, SessionEnd then SessionStart), but
Claude Code neither restarts the plugin's monitor nor tells it: the follower it started
knows only the first id and its process (``$CLAUDE_PID``). So SessionStart records, per
process, the id it runs now, and a follower whose session ended follows the one its
process went on to. Kept in the user's data folder (only this user writes there).
Standard library only: the hook path imports it.
"""

from __future__ import annotations

import os

from agentmonitors.workspace import data_root

__all__ = ["current_session", "record_current_session", "records_folder"]

MAX_ID_BYTES = 512


def records_folder() -> str:
    """Where the records are: one file per process, named by its pid (pruned by the
    daemon once the process is gone, ``delivery/stale_records.py``)."""
    return os.path.join(data_root(), "agentmonitors", "claude-code-processes")


def _record_path(host_pid: str) -> str:
    return os.path.join(records_folder(), host_pid)


def record_current_session(host_pid: str | None, host_session_id: str) -> None:
    """Remember that process ``host_pid`` now runs ``host_session_id`` (atomically)."""
    if not host_pid or not host_pid.isdigit():
        return
    path = _record_path(host_pid)
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    partial = f"{path}.{os.getpid()}.tmp"
    with open(partial, "w", encoding="utf-8") as handle:
        handle.write(host_session_id)
    os.replace(partial, path)


def current_session(host_pid: str | None) -> str | None:
    """The session id process ``host_pid`` last started, or None when none is recorded."""
    if not host_pid or not host_pid.isdigit():
        return None
    try:
        with open(_record_path(host_pid), encoding="utf-8") as handle:
            found = handle.read(MAX_ID_BYTES + 1).strip()
    except (OSError, UnicodeDecodeError):
        return None
    return found if found and len(found) <= MAX_ID_BYTES else None
