"""The one inotify binding: ``ctypes`` over libc, standard library only.

Both watchers use it: the daemon's file events (``sources/file_events_inotify.py``: a
watch per folder, read on the asyncio loop) and the follower's and rewake waiter's watch
of one file (``transports/file_watch.py``), which the hook path imports, so it loads
nothing beyond ``ctypes``, ``struct`` and ``contextlib`` (docs/architecture.md,
"Speed"). It stands in for the ``inotify_simple`` package the daemon used before: the
same calls (``add_watch``, ``rm_watch``, ``read``, ``fileno``, ``close``) on a
non-blocking, close-on-exec instance.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import struct
import sys

__all__ = ["Inotify", "InotifyEvent"]

# The kernel's constants (linux/inotify.h), stable ABI.
IN_MODIFY = 0x2
IN_ATTRIB = 0x4
IN_CLOSE_WRITE = 0x8
IN_MOVED_FROM = 0x40
IN_MOVED_TO = 0x80
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_UNMOUNT = 0x2000
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_ONLYDIR = 0x01000000
IN_EXCL_UNLINK = 0x04000000
IN_ISDIR = 0x40000000

CHANGE_MASK = (
    IN_MODIFY
    | IN_ATTRIB
    | IN_CLOSE_WRITE
    | IN_MOVED_FROM
    | IN_MOVED_TO
    | IN_CREATE
    | IN_DELETE
    | IN_DELETE_SELF
    | IN_MOVE_SELF
)
"""What changes a file's content or its presence in a folder: each watcher asks this."""

_HEADER = struct.Struct("iIII")  # wd, mask, cookie, len
# Whole events only come out of a read: a buffer of many maximal ones (a header and
# NAME_MAX + 1 bytes of name) drains a busy queue in few calls.
_READ_BYTES = 64 * 1024

_LIBC: list[ctypes.CDLL] = []


def _libc() -> ctypes.CDLL:
    """libc, with its inotify calls; ``ImportError`` where there are none."""
    if not _LIBC:
        if not sys.platform.startswith("linux"):
            raise ImportError("inotify is Linux only")
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            for name in ("inotify_init1", "inotify_add_watch", "inotify_rm_watch"):
                getattr(libc, name)
        except (OSError, AttributeError) as error:
            raise ImportError(f"no inotify in this libc: {error}") from None
        _LIBC.append(libc)
    return _LIBC[0]


def _failed(*names: str) -> OSError:
    code = ctypes.get_errno()
    return OSError(code, os.strerror(code), *names)


class InotifyEvent:
    """One event: the watch it came from, what happened, and the name in that folder
    (empty for the watched folder itself)."""

    __slots__ = ("cookie", "mask", "name", "wd")

    def __init__(self, wd: int, mask: int, cookie: int, name: str) -> None:
        self.wd = wd
        self.mask = mask
        self.cookie = cookie
        self.name = name

    def __repr__(self) -> str:
        return f"InotifyEvent(wd={self.wd}, mask={self.mask:#x}, name={self.name!r})"


class Inotify:
    """A non-blocking, close-on-exec inotify instance.

    Raises ``ImportError`` where the platform has no inotify, and ``OSError`` when the
    kernel refuses an instance (``EMFILE``: ``max_user_instances`` reached).
    """

    def __init__(self) -> None:
        self._libc = _libc()
        fd = int(self._libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC))
        if fd < 0:
            raise _failed()
        self._fd: int | None = fd

    def fileno(self) -> int:
        if self._fd is None:
            raise ValueError("the inotify instance is closed")
        return self._fd

    def add_watch(self, path: str, mask: int) -> int:
        """Watch ``path`` for ``mask``; its watch descriptor (the same for the same inode).
        ``OSError`` with the kernel's errno when refused (``ENOSPC``, ``ENOENT``, ...)."""
        wd = int(self._libc.inotify_add_watch(self.fileno(), os.fsencode(path), mask))
        if wd < 0:
            raise _failed(path)
        return wd

    def rm_watch(self, wd: int) -> None:
        if int(self._libc.inotify_rm_watch(self.fileno(), wd)) < 0:
            raise _failed()

    def read(self, timeout: int | None = 0) -> list[InotifyEvent]:
        """Every event queued now, without waiting (``timeout`` must be 0: the callers
        wait on :meth:`fileno` themselves, with ``select`` or the event loop)."""
        if timeout != 0:
            raise ValueError("only a non-blocking read (timeout=0) is supported")
        return parse_events(self.read_bytes())

    def read_bytes(self) -> bytes:
        """The queue's raw events, drained; ``OSError`` on a broken instance."""
        fd = self.fileno()
        chunks = []
        while True:
            try:
                data = os.read(fd, _READ_BYTES)
            except (BlockingIOError, InterruptedError):
                break
            if not data:
                break
            chunks.append(data)
            if len(data) < _READ_BYTES - _HEADER.size - 256:
                break  # less than a full buffer: the queue is empty
        return b"".join(chunks)

    def close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):  # closed already: nothing to release
                os.close(fd)


def parse_events(data: bytes) -> list[InotifyEvent]:
    """The events in ``data`` as read from an inotify descriptor."""
    events = []
    offset = 0
    while offset + _HEADER.size <= len(data):
        wd, mask, cookie, length = _HEADER.unpack_from(data, offset)
        start = offset + _HEADER.size
        name = data[start : start + length].split(b"\0", 1)[0]
        events.append(InotifyEvent(wd, mask, cookie, os.fsdecode(name)))
        offset = start + length
    return events
