"""One file watched without polling: the enable file, for a follower asleep in a wait.

The enable file says whether the project is enabled, whether live updates are on and
which urgencies wake the session (``live:``, ``wake:``); a follower must react when it
changes, but nothing in the daemon writes it. On Linux an inotify descriptor on its
folder becomes readable when something there changes, and the follower's wait
(``transports/follow_wait.py``) sleeps on it too. Elsewhere (or when inotify refuses,
its watch limit reached) :attr:`FileWatch.fd` is None and the follower looks at the
file once a second instead. The binding is the daemon's too (``fastpath/inotify.py``).
"""

from __future__ import annotations

import os

from agentmonitors.fastpath.inotify import (
    CHANGE_MASK,
    IN_DELETE_SELF,
    IN_MOVE_SELF,
    Inotify,
    parse_events,
)

__all__ = ["FileWatch"]

# What changes a file's content or its presence in the folder (a transcript is appended
# to, the enable file replaced).
_MASK = CHANGE_MASK


class FileWatch:
    """Readable :attr:`fd` when ``path`` may have changed; :meth:`changed` drains it."""

    def __init__(self, path: str) -> None:
        self.folder, self.name = os.path.split(os.path.abspath(path))
        self.fd: int | None = None
        self._inotify: Inotify | None = None
        try:
            inotify = Inotify()
        except (ImportError, OSError):
            return  # not Linux, or no instance left (max_user_instances)
        try:
            inotify.add_watch(self.folder, _MASK)
        except OSError:
            inotify.close()  # a missing folder, or the user's watch limit reached
            return
        self._inotify = inotify
        self.fd = inotify.fileno()

    def changed(self) -> bool:
        """Whether the file (or its folder) changed since the last call; drains the queue."""
        if self._inotify is None:
            return False
        try:
            data = self._inotify.read_bytes()
        except OSError:
            return True  # an overflowed or broken queue: look at the file
        return any(
            event.name in ("", self.name) or event.mask & (IN_DELETE_SELF | IN_MOVE_SELF)
            for event in parse_events(data)
        )

    def close(self) -> None:
        inotify, self._inotify, self.fd = self._inotify, None, None
        if inotify is not None:
            inotify.close()
