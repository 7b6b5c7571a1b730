"""One file watched without polling: the enable file, for a follower asleep in a wait.

The enable file says whether the project is enabled, whether live updates are on and
which urgencies wake the session (``live:``, ``wake:``); a follower must react when it
changes, but nothing in the daemon writes it. On Linux an inotify descriptor on its
folder becomes readable when something there changes, and the follower's wait
(``transports/follow_wait.py``) sleeps on it too. Elsewhere (or when inotify refuses,
its watch limit reached) :attr:`FileWatch.fd` is None and the follower looks at the
file once a second instead. Standard library only (``ctypes`` over libc).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import struct
import sys

__all__ = ["FileWatch"]

# <sys/inotify.h>: what changes a file's content or its presence in the folder (a
# transcript is appended to, the enable file replaced).
_IN_MODIFY = 0x002
_IN_ATTRIB = 0x004
_IN_CLOSE_WRITE = 0x008
_IN_MOVED_FROM = 0x040
_IN_MOVED_TO = 0x080
_IN_CREATE = 0x100
_IN_DELETE = 0x200
_IN_DELETE_SELF = 0x400
_IN_MOVE_SELF = 0x800
_MASK = (
    _IN_MODIFY
    | _IN_ATTRIB
    | _IN_CLOSE_WRITE
    | _IN_MOVED_FROM
    | _IN_MOVED_TO
    | _IN_CREATE
    | _IN_DELETE
    | _IN_DELETE_SELF
    | _IN_MOVE_SELF
)
_HEADER = struct.Struct("iIII")  # wd, mask, cookie, len


class FileWatch:
    """Readable :attr:`fd` when ``path`` may have changed; :meth:`changed` drains it."""

    def __init__(self, path: str) -> None:
        self.folder, self.name = os.path.split(os.path.abspath(path))
        self.fd: int | None = None
        if not sys.platform.startswith("linux"):
            return
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            fd = int(libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC))
        except (OSError, AttributeError):
            return
        if fd < 0:
            return
        if int(libc.inotify_add_watch(fd, os.fsencode(self.folder), _MASK)) < 0:
            os.close(fd)  # a missing folder, or the user's watch limit reached
            return
        self.fd = fd

    def changed(self) -> bool:
        """Whether the file (or its folder) changed since the last call; drains the queue."""
        if self.fd is None:
            return False
        found = False
        while True:
            try:
                data = os.read(self.fd, 65536)
            except (BlockingIOError, InterruptedError):
                return found
            except OSError:
                return True  # an overflowed or broken queue: look at the file
            if not data:
                return found
            offset = 0
            while offset + _HEADER.size <= len(data):
                _wd, mask, _cookie, length = _HEADER.unpack_from(data, offset)
                raw = data[offset + _HEADER.size : offset + _HEADER.size + length]
                name = raw.rstrip(b"\0").decode(errors="replace")
                offset += _HEADER.size + length
                if name in ("", self.name) or mask & (_IN_DELETE_SELF | _IN_MOVE_SELF):
                    found = True

    def close(self) -> None:
        fd, self.fd = self.fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)
