"""Whether a live channel transport is bound to this daemon (the idle reaper asks).

A channel server (``channel serve``) or a follower heartbeats a record into the
machine-wide heartbeat folder (``delivery/heartbeats.py``). While a fresh one names this
daemon's workspace and socket, the daemon must not reap itself for idleness even
with no open hook session. This only reads the registry: reaping stale records is
the writers' job.
"""

from __future__ import annotations

import os

from agentmonitors.delivery.heartbeats import fresh_until, read_record, transports_dir
from agentmonitors.delivery.transports.registry import transports


def _same_path(left: object, right: str) -> bool:
    # Resolved-path equality, shared with doctor: a symlinked workspace or data dir
    # must still match the daemon that was started through the other spelling.
    return isinstance(left, str) and os.path.realpath(left) == os.path.realpath(right)


def channel_attached(socket_path: str, workspace_path: str, now_ms: int) -> bool:
    """True when a fresh channel record is bound to this daemon's workspace and socket."""
    return attached_until(socket_path, workspace_path, now_ms) is not None


# A registry that cannot be listed holds the daemon this long before it looks again.
UNLISTABLE_HOLD_MS = 60_000


def attached_until(socket_path: str, workspace_path: str, now_ms: int) -> int | None:
    """Until when fresh channel records bound to this daemon's workspace and socket
    hold it up (the latest moment one goes stale); None when none does.

    A missing registry means no channel ever ran here: None. A registry we cannot
    list counts as attached, because wrongly reaping a daemon a channel depends on is
    worse than idling a while longer.
    """
    try:
        with os.scandir(transports_dir()) as iterator:
            entries = list(iterator)
    except FileNotFoundError:
        return None
    except OSError:
        return now_ms + UNLISTABLE_HOLD_MS
    holding = {transport.name for transport in transports() if transport.holds_daemon}
    latest: int | None = None
    for entry in entries:
        if not entry.name.endswith(".json"):
            continue
        record = read_record(entry.path)
        # A transport declares whether its heartbeat holds the daemon up (a channel does,
        # and ``events follow``; a hook's record outlives its session, so it does not).
        if record is None or record.get("transport") not in holding:
            continue
        until = fresh_until(record, now_ms)
        if until is None:
            continue
        if _same_path(record.get("workspacePath"), workspace_path) and _same_path(
            record.get("socketPath"), socket_path
        ):
            latest = until if latest is None else max(latest, until)
    return latest
