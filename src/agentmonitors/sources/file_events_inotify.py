"""Event-driven file hints on Linux: inotify watches, read on the asyncio loop.

The inotify descriptor sits on the event loop (``loop.add_reader``), so a watcher with
nothing changing makes no wakeup at all, and a change reaches :func:`dispatch` a few
milliseconds after the kernel reports it (see docs/architecture.md, "Speed").

Watches are per folder: every folder below each root gets one (``.git`` folders are
skipped: their changes never hint), a folder created or moved in gets them at once, and
one moved out or deleted loses them. Two limits of the kernel are handled without
missing a change:

- a refused watch (``ENOSPC``: ``fs.inotify.max_user_watches`` is reached, or the
  process may not open another inotify instance) leaves those folders *unwatched*: they
  are hinted every :data:`RESCAN_S` (a rescan of just them) and watching them is tried
  again each time, so event-driven mode returns once watches are free;
- a queue overflow (``IN_Q_OVERFLOW``: events were dropped) adds the watches of any
  folder created meanwhile and hints every root once.

Each is logged once when it starts (and once when it ends) and shows in
:meth:`InotifyTree.state`, which ``daemon status`` and ``doctor`` print.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

from agentmonitors.fastpath.inotify import (
    CHANGE_MASK,
    IN_CLOSE_WRITE,
    IN_CREATE,
    IN_DELETE,
    IN_DELETE_SELF,
    IN_EXCL_UNLINK,
    IN_IGNORED,
    IN_ISDIR,
    IN_MODIFY,
    IN_MOVE_SELF,
    IN_MOVED_FROM,
    IN_MOVED_TO,
    IN_ONLYDIR,
    IN_Q_OVERFLOW,
    IN_UNMOUNT,
    Inotify,
)

logger = logging.getLogger("agentmonitors.hints")

WATCH_LIMIT_ENV = "AGENTMONITORS_FILE_WATCH_LIMIT"
"""At most this many watches for the daemon (a share of ``max_user_watches``)."""
QUIET_S = 0.005
"""Changed paths are dispatched once events pause this long and every file written
meanwhile is closed again: a write is several events (create or truncate, modify,
close), and a reconcile between them would see a half-written file (an empty one
first, then a second change)."""
MAX_DELAY_S = 0.05
"""Events that never pause, or a file kept open for writing (a log), are still
dispatched this long after the first of them."""
RESCAN_S = 2.0
"""How often unwatched folders are rescanned, and watching them tried again."""
OVERFLOW_LOG_EVERY_S = 600.0
"""After the first overflow, another is logged no more often than this."""

WATCH_MASK = CHANGE_MASK | IN_ONLYDIR | IN_EXCL_UNLINK

# add_watch errors that mean "this folder is gone or cannot be watched", not a limit.
_SKIPPED = {errno.ENOENT, errno.ENOTDIR, errno.EACCES, errno.EPERM, errno.ELOOP}


class InotifyEvent(Protocol):
    wd: int
    mask: int
    cookie: int
    name: str


class Notifier(Protocol):
    """The inotify instance as used here (``fastpath.inotify.Inotify``'s methods; a test
    wraps one to drop events as an overflowing queue does)."""

    def fileno(self) -> int: ...
    def add_watch(self, path: str, mask: int) -> int: ...
    def rm_watch(self, wd: int) -> None: ...
    def read(self, timeout: int | None = None) -> Iterable[InotifyEvent]: ...
    def close(self) -> None: ...


NotifierFactory = Callable[[], Notifier]


def default_notifier() -> Notifier:
    """A non-blocking inotify instance (raises ``ImportError`` where there is none)."""
    return Inotify()


def contains(root: str, path: str) -> bool:
    """Whether ``path`` is ``root`` or inside it."""
    return path == root or path.startswith(root if root.endswith("/") else root + "/")


def outermost(paths: Iterable[str]) -> list[str]:
    """``paths`` without those inside another one, sorted."""
    kept: list[str] = []
    for path in sorted(set(paths)):
        if not any(contains(outer, path) for outer in kept):
            kept.append(path)
    return kept


def watch_limit_from_env() -> int | None:
    """The watch cap set in :data:`WATCH_LIMIT_ENV`, or None (a bad value is ignored)."""
    value = os.environ.get(WATCH_LIMIT_ENV, "").strip()
    if not value:
        return None
    try:
        limit = int(value)
    except ValueError:
        logger.warning("%s=%r is not a whole number; ignored", WATCH_LIMIT_ENV, value)
        return None
    return max(0, limit)


def _kernel_watch_limit() -> str:
    try:
        with open("/proc/sys/fs/inotify/max_user_watches", encoding="ascii") as handle:
            return handle.read().strip()
    except OSError:
        return "?"


def _iso_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class InotifyTree:
    """Recursive inotify watches over ``roots``; changed paths go to ``dispatch``."""

    def __init__(
        self,
        roots: Sequence[str],
        dispatch: Callable[[Iterable[str]], None],
        *,
        notifier_factory: NotifierFactory = default_notifier,
        watch_limit: int | None = None,
        rescan_s: float = RESCAN_S,
    ) -> None:
        self._roots = tuple(roots)
        self._dispatch = dispatch
        self._factory = notifier_factory
        self._limit = watch_limit
        self._rescan_s = rescan_s
        self._notifier: Notifier | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._paths: dict[int, str] = {}
        self._wds: dict[str, int] = {}
        self._unwatched: set[str] = set()
        self._refusal: str | None = None
        self._pending: set[str] = set()
        self._flush_handle: asyncio.TimerHandle | None = None
        self._first_event_at = self._last_event_at = 0.0
        self._writing: set[str] = set()  # files written to and not closed yet
        self._rescan_handle: asyncio.TimerHandle | None = None
        self._overflows = 0
        self._last_overflow_at: str | None = None
        self._overflow_logged_at: float | None = None
        self._closed = False
        self._degraded_logged = False
        self._limited = False  # some folders are unwatched for want of watches

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Watch every folder of the roots, then read events on the running loop.

        Raises ``ImportError`` where inotify is not available; a refused instance or
        refused watches are not errors (those folders are rescanned instead).
        """
        self._loop = asyncio.get_running_loop()
        factory = self._factory
        factory_failure: OSError | None = None
        try:
            self._notifier = factory()
        except OSError as error:  # EMFILE: max_user_instances reached
            factory_failure = error
        if self._notifier is None:
            self._limited = True
            self._refuse(self._roots, f"no inotify instance: {factory_failure}")
        else:
            # The first walk can take a while on a big tree: off the loop. Events from
            # the walk's own time wait in the kernel queue until the reader is added.
            await asyncio.to_thread(self._watch_all, self._roots)
            self._loop.add_reader(self._notifier.fileno(), self._readable)
        self._after_refusals()

    def close(self) -> None:
        """Stop watching and release the inotify instance."""
        self._closed = True
        for handle in (self._flush_handle, self._rescan_handle):
            if handle is not None:
                handle.cancel()
        self._flush_handle = self._rescan_handle = None
        notifier, self._notifier = self._notifier, None
        if notifier is not None:
            if self._loop is not None:
                self._loop.remove_reader(notifier.fileno())
            notifier.close()
        self._paths.clear()
        self._wds.clear()

    # ------------------------------------------------------------------ state

    @property
    def mode(self) -> str:
        """``events`` when every folder is watched, ``rescanning`` while some are not."""
        return "rescanning" if self._unwatched else "events"

    @property
    def problem(self) -> str | None:
        """Why some folders are rescanned instead of watched, while they are."""
        if not self._unwatched:
            return None
        return (
            f"{self._refusal}; {len(self._unwatched)} folder(s) without a watch are rescanned"
            f" every {self._rescan_s:g} s until watching them succeeds"
        )

    def state(self) -> dict[str, Any]:
        """What ``daemon status`` and ``doctor`` say about the watches."""
        return {
            "backend": "inotify",
            "mode": self.mode,
            "watches": len(self._paths),
            "watchLimit": self._limit,
            "limited": self._limited and bool(self._unwatched),
            "unwatchedFolders": len(self._unwatched),
            "unwatchedExamples": outermost(self._unwatched)[:3],
            "overflows": self._overflows,
            "lastOverflowAt": self._last_overflow_at,
        }

    # ------------------------------------------------------------------ watches

    def _add(self, folder: str) -> None:
        notifier = self._notifier
        if notifier is None:
            raise OSError(errno.ENOSPC, "no inotify instance")
        if self._limit is not None and folder not in self._wds and len(self._paths) >= self._limit:
            raise OSError(errno.ENOSPC, f"watch limit {self._limit} ({WATCH_LIMIT_ENV})")
        wd = notifier.add_watch(folder, WATCH_MASK)
        # The same folder (inode) always gets the same descriptor.
        previous = self._paths.get(wd)
        if previous is not None and previous != folder:
            self._wds.pop(previous, None)
        self._paths[wd] = folder
        self._wds[folder] = wd

    def _watch_tree(self, top: str) -> bool:
        """Watch ``top`` and every folder below it; False once a watch is refused (the
        folders not reached then are left unwatched)."""
        stack = [top]
        while stack:
            folder = stack.pop()
            try:
                self._add(folder)
            except OSError as error:
                if error.errno in _SKIPPED:
                    if folder in self._roots:  # a root is expected to be there
                        self._refuse([folder], f"cannot watch {folder} ({error.strerror})")
                    logger.debug("not watching %s: %s", folder, error)
                    continue
                self._limited = True
                why = f"watches refused ({error.strerror or error})"
                if error.errno == errno.ENOSPC:
                    why += f"; fs.inotify.max_user_watches is {_kernel_watch_limit()}"
                self._refuse([folder, *stack], why)
                return False
            try:
                with os.scandir(folder) as entries:
                    stack.extend(
                        entry.path
                        for entry in entries
                        if entry.name != ".git" and entry.is_dir(follow_symlinks=False)
                    )
            except OSError:
                continue
        return True

    def _watch_all(self, tops: Iterable[str]) -> None:
        tops = list(tops)
        for index, top in enumerate(tops):
            if not self._watch_tree(top):
                # Once one watch is refused the next ones would be too.
                self._refuse(tops[index + 1 :], self._refusal or "watches refused")
                return

    def _refuse(self, folders: Iterable[str], why: str) -> None:
        folders = list(folders)
        if folders:
            self._unwatched.update(folders)
            self._refusal = why

    def _forget_tree(self, top: str) -> None:
        """Drop the watches of ``top`` and below (moved away or deleted)."""
        notifier = self._notifier
        for folder in [path for path in self._wds if contains(top, path)]:
            wd = self._wds.pop(folder)
            self._paths.pop(wd, None)
            if notifier is not None:
                with contextlib.suppress(OSError):  # already gone with its folder
                    notifier.rm_watch(wd)
        self._unwatched = {path for path in self._unwatched if not contains(top, path)}

    def _after_refusals(self) -> None:
        """Log the start of rescanning once, and keep the rescan timer set while needed."""
        if not self._unwatched or self._closed:
            return
        if not self._degraded_logged:
            self._degraded_logged = True
            logger.warning(
                "file events: %s; %d folder(s), such as %s, are rescanned every %g s"
                " instead until they can be watched",
                self._refusal,
                len(self._unwatched),
                outermost(self._unwatched)[0],
                self._rescan_s,
            )
        if self._rescan_handle is None and self._loop is not None:
            self._rescan_handle = self._loop.call_later(self._rescan_s, self._rescan)

    def _rescan(self) -> None:
        """Try watching the unwatched folders again, then hint them (after the watch, so
        nothing falls between)."""
        self._rescan_handle = None
        if self._closed:
            return
        folders = outermost(self._unwatched)
        self._unwatched.clear()
        if self._notifier is None:
            try:
                self._notifier = self._factory()
            except OSError as error:
                self._refuse(folders, f"no inotify instance: {error}")
            else:
                assert self._loop is not None
                self._loop.add_reader(self._notifier.fileno(), self._readable)
        if not self._unwatched:
            self._watch_all(folders)
        self._dispatch(folders)
        if self._unwatched:
            self._after_refusals()
            return
        self._degraded_logged = self._limited = False
        logger.warning("file events: every folder is watched again (%d watches)", len(self._paths))

    # ------------------------------------------------------------------ events

    def _readable(self) -> None:
        notifier = self._notifier
        if notifier is None:
            return
        try:
            events = list(notifier.read(timeout=0))
        except OSError as error:
            logger.warning("reading file events failed: %s", error)
            return
        overflowed = False
        for event in events:
            overflowed = self._handle(event) or overflowed
        if overflowed:
            self._overflowed()
        if self._unwatched and self._rescan_handle is None:
            self._after_refusals()
        if self._pending and self._loop is not None:
            self._last_event_at = now = self._loop.time()
            handle = self._flush_handle
            if handle is None:
                self._first_event_at = now
                self._flush_handle = self._loop.call_at(now + QUIET_S, self._flush)
            elif not self._writing and handle.when() > now + QUIET_S:
                # The last open write closed: no need to wait out MAX_DELAY_S.
                handle.cancel()
                self._flush_handle = self._loop.call_at(now + QUIET_S, self._flush)

    def _handle(self, event: InotifyEvent) -> bool:
        """Note one event's path; True for a queue overflow."""
        mask = event.mask
        if mask & IN_Q_OVERFLOW:
            return True
        folder = self._paths.get(event.wd)
        if folder is None:
            return False  # a watch already forgotten
        if mask & IN_IGNORED:
            self._paths.pop(event.wd, None)
            if self._wds.get(folder) == event.wd:
                del self._wds[folder]
            return False
        path = os.path.join(folder, event.name) if event.name else folder
        if not mask & IN_ISDIR:
            if mask & IN_CLOSE_WRITE:
                self._writing.discard(path)
            elif mask & (IN_CREATE | IN_MODIFY):
                self._writing.add(path)
        if mask & IN_ISDIR and event.name:
            if mask & (IN_MOVED_FROM | IN_DELETE):
                self._forget_tree(path)
            elif mask & (IN_CREATE | IN_MOVED_TO) and event.name != ".git":
                # Its files may have been written before the watch: the folder is
                # dispatched too, and a folder hint is a rescan of it.
                self._watch_tree(path)
        elif mask & (IN_MOVE_SELF | IN_DELETE_SELF | IN_UNMOUNT) and folder in self._roots:
            # A root moved or deleted: watch whatever stands at its path later.
            self._forget_tree(folder)
            self._refuse([folder], f"watched folder {folder} was moved or deleted")
        self._pending.add(path)
        return False

    def _overflowed(self) -> None:
        """Events were dropped: watch the folders made meanwhile and hint every root."""
        self._overflows += 1
        self._last_overflow_at = _iso_now()
        now = time.monotonic()
        if (
            self._overflow_logged_at is None
            or now - self._overflow_logged_at >= OVERFLOW_LOG_EVERY_S
        ):
            self._overflow_logged_at = now
            logger.warning(
                "file events: the event queue overflowed (%d time(s) so far); the watched"
                " folders are rescanned once",
                self._overflows,
            )
        self._watch_all(root for root in self._roots if root not in self._unwatched)
        self._pending.update(self._roots)

    def _flush(self) -> None:
        self._flush_handle = None
        if self._loop is not None and not self._closed:
            # Events came meanwhile: wait for the pause, up to MAX_DELAY_S in all.
            quiet = self._first_event_at + MAX_DELAY_S if self._writing else self._last_event_at
            due = min(quiet + QUIET_S, self._first_event_at + MAX_DELAY_S)
            if due > self._loop.time():
                self._flush_handle = self._loop.call_at(due, self._flush)
                return
        pending, self._pending = self._pending, set()
        self._writing.clear()
        if pending and not self._closed:
            self._dispatch(sorted(pending))
