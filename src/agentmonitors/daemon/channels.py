"""Whether a live channel transport is bound to this daemon (the idle reaper asks).

A channel server (``channel serve``) heartbeats a JSON record into the machine-wide
transport registry. While a fresh one names this daemon's workspace and socket, the
daemon must not reap itself for idleness even with no open hook session.
This module only reads the registry: reaping stale records is the writers' job.
"""

from __future__ import annotations

import json
import math
import os
import stat
from datetime import UTC, datetime
from typing import Any

from agentmonitors.workspace import data_root

CHANNEL_HEARTBEAT_TTL_MS = 30_000
HEARTBEAT_FUTURE_TOLERANCE_MS = 5_000
RECORD_SCHEMA_VERSION = 1
# Records are a few hundred bytes; anything much bigger is not one of ours.
_MAX_RECORD_BYTES = 1 << 20


def transports_dir() -> str:
    """``<data root>/agentmonitors/transports``."""
    return os.path.join(data_root(), "agentmonitors", "transports")


def _parse_iso_ms(value: Any) -> int | None:
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)  # writers always emit UTC ("...Z")
    return int(moment.timestamp() * 1000)


def _ttl_ms(value: Any) -> float:
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if number and math.isfinite(value) and value >= 0:
        return float(value)
    return float(CHANNEL_HEARTBEAT_TTL_MS)


def heartbeat_is_stale(record: dict[str, Any], now_ms: int) -> bool:
    """Stale: ``updatedAt`` unparseable, over 5 s in the future, or older than ``ttlMs``.

    The future tolerance absorbs clock skew between processes; beyond it a timestamp
    is more likely corrupt than early, and a corrupt record must not pin the daemon.
    """
    updated = _parse_iso_ms(record.get("updatedAt"))
    if updated is None:
        return True
    if updated - now_ms > HEARTBEAT_FUTURE_TOLERANCE_MS:
        return True
    return now_ms - updated > _ttl_ms(record.get("ttlMs"))


def _same_path(left: Any, right: str) -> bool:
    # Resolved-path equality, shared with doctor: a symlinked workspace or data dir
    # must still match the daemon that was started through the other spelling.
    return isinstance(left, str) and os.path.realpath(left) == os.path.realpath(right)


def _read_record(path: str) -> dict[str, Any] | None:
    # No symlinks, and non-blocking so a FIFO dropped in the registry cannot hang the
    # daemon's tick; then only a regular file is read.
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None  # vanished or unreadable: a writer is replacing or reaping it
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb", closefd=False) as handle:
            raw = handle.read(_MAX_RECORD_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(raw) > _MAX_RECORD_BYTES:
        return None
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("schemaVersion") != RECORD_SCHEMA_VERSION:
        return None
    return data


def channel_attached(socket_path: str, workspace_path: str, now_ms: int) -> bool:
    """True when a fresh channel record is bound to this daemon's workspace and socket.

    A missing registry means no channel ever ran here: False. A registry we cannot
    list counts as attached, because wrongly reaping a daemon a channel depends on is
    worse than idling one tick longer.
    """
    try:
        with os.scandir(transports_dir()) as iterator:
            entries = list(iterator)
    except FileNotFoundError:
        return False
    except OSError:
        return True
    for entry in entries:
        if not entry.name.endswith(".json"):
            continue
        record = _read_record(entry.path)
        if record is None or record.get("transport") != "channel":
            continue
        if heartbeat_is_stale(record, now_ms):
            continue
        if _same_path(record.get("workspacePath"), workspace_path) and _same_path(
            record.get("socketPath"), socket_path
        ):
            return True
    return False
