"""The per-session hook-state file: a regenerable cache of what is waiting.

Never read by the runtime. Written owner-only and atomically: a stale ``<file>.tmp``
is removed, the temp file is created exclusively with mode 0600 (so a planted
symlink is never followed), then renamed over the target. The parent folder is 0700.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from typing import Any

from agentmonitors.clock import iso_from_ms
from agentmonitors.delivery.decide import SessionView
from agentmonitors.delivery.records import LATEST_HIGH_TITLES

FILE_MODE = 0o600
DIR_MODE = 0o700


def hook_state(view: SessionView) -> dict[str, Any]:
    """The file's content for one session (lease-aware, like a claim decision)."""
    claimable_high = view.claimable("high")
    return {
        "sessionId": view.session_id,
        "updatedAt": iso_from_ms(view.now_ms),
        "unread": view.counts(),
        "hasPendingHigh": any(row.settled(view.now_ms) for row in claimable_high),
        "hasPendingNormal": bool(view.claimable("normal")),
        "hasPendingLow": bool(view.claimable("low")),
        "latestHighTitles": [row.event.title for row in claimable_high[-LATEST_HIGH_TITLES:]],
    }


def _private_dir(path: str) -> None:
    old = os.umask(0o077)
    try:
        os.makedirs(path, mode=DIR_MODE, exist_ok=True)
    finally:
        os.umask(old)
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        return
    if stat.S_IMODE(info.st_mode) != DIR_MODE and info.st_uid == os.getuid():
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        try:
            os.fchmod(fd, DIR_MODE)
        finally:
            os.close(fd)


def write_private_json(path: str, payload: Any) -> None:
    """2-space JSON at ``path`` via an exclusive 0600 temp file and a rename."""
    _private_dir(os.path.dirname(os.path.abspath(path)))
    temp = f"{path}.tmp"
    with contextlib.suppress(FileNotFoundError):
        os.unlink(temp)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(temp, flags, FILE_MODE)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(payload, handle, indent=2, ensure_ascii=False)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
