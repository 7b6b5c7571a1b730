"""File-change hints for file-fingerprint monitors, from inotify or watchfiles events.

A hint only says "look at this monitor soon": the runtime answers it with an ordinary
``observe`` (a full reconcile), which stays the truth. Events can be lost, coalesced
or unavailable (inotify limits, ``AGENTMONITORS_NO_FILE_EVENTS=1``, filesystems without
notifications); the periodic reconcile is the fallback, so a missed or spurious hint
costs latency or one cheap reconcile, never correctness.

On Linux the events come from inotify on the event loop (``file_events_inotify``: no
wakeup while nothing changes, a change hinted within milliseconds, watcher limits
handled by rescanning); elsewhere, or when inotify cannot be loaded, from watchfiles,
whose thread polls its backend every ``STEP_MS``. Both are imported inside the
functions that use them, so importing this module stays cheap.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from agentmonitors.sources.file_events_inotify import (
    RESCAN_S,
    InotifyTree,
    NotifierFactory,
    contains,
    default_notifier,
    outermost,
    watch_limit_from_env,
)
from agentmonitors.sources.file_globs import GlobPattern, compile_patterns, resolve_base
from agentmonitors.sources.traits import FileHints

NO_EVENTS_ENV = "AGENTMONITORS_NO_FILE_EVENTS"
DEBOUNCE_MS = 50
STEP_MS = 25
# Past this many changed paths in one batch (a checkout, a build), a monitor is hinted
# "unknown": one walk of its tree costs less than looking at each path.
HINTED_PATHS_MAX = 1000
# After watchfiles fails to start, the same roots are retried no sooner than this.
RETRY_AFTER_S = 60.0
# How long close() waits for the watcher thread to notice its stop event.
STOP_TIMEOUT_S = 5.0

logger = logging.getLogger("agentmonitors.hints")

HintFilter = Callable[[str], bool]
# What ``on_hint`` receives: each hinted monitor's changed paths, or None when what
# changed is unknown (the monitor must walk its whole tree).
Hinted = Mapping[str, frozenset[str] | None]


def _patterns_of(value: Any) -> list[str] | None:
    if isinstance(value, str):
        return [value] if value.strip() else None
    if isinstance(value, list) and all(isinstance(item, str) and item.strip() for item in value):
        return list(value)
    return None


def _compiled(
    config: Mapping[str, Any], workspace_path: str | None
) -> tuple[list[GlobPattern], list[GlobPattern]] | None:
    """The config's globs and ignore patterns, or None when it is not usable."""
    globs = _patterns_of(config.get("globs"))
    ignore = _patterns_of(config.get("ignore", [])) if config.get("ignore") else []
    cwd = config.get("cwd")
    if not globs or ignore is None or not (cwd is None or isinstance(cwd, str)):
        return None
    base = resolve_base(cwd, workspace_path)
    try:
        return compile_patterns(globs, base), compile_patterns(ignore, base)
    except ValueError:
        return None


def _existing_folder(path: str) -> str:
    """``path`` if it is a folder, else its nearest existing ancestor folder."""
    while not os.path.isdir(path):
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return path


def watch_roots(config: Mapping[str, Any], workspace_path: str | None) -> list[str]:
    """The existing folders whose subtrees hold every file the config's globs can match.

    Each glob contributes its literal prefix folder (for a wildcard-free pattern, the
    file's folder), or that folder's nearest existing ancestor while it does not exist
    yet. An invalid config has no roots.
    """
    compiled = _compiled(config, workspace_path)
    if compiled is None:
        return []
    globs, _ignore = compiled
    return outermost(_existing_folder(pattern.watch_root) for pattern in globs)


def hint_filter(config: Mapping[str, Any], workspace_path: str | None) -> HintFilter:
    """A test of whether a changed path may matter to a monitor with this config.

    A path matters if the globs match it (and ignore does not), or if it is not an
    existing regular file: a folder (its files may match) or something gone (it may
    have been a tracked file). Existing files the globs do not match never matter.
    """
    compiled = _compiled(config, workspace_path)
    if compiled is None:
        return lambda path: True
    globs, ignore = compiled

    def matters(path: str) -> bool:
        path = os.path.normpath(path)
        if any(pattern.matches(path) for pattern in globs):
            return not any(pattern.matches(path) for pattern in ignore)
        try:
            info = os.stat(path)
        except OSError:
            return True
        return not stat.S_ISREG(info.st_mode)

    return matters


def _feedback(path: str) -> bool:
    """Changes that must never hint: git's internals and our own inbox database."""
    if "/.git/" in path or path.endswith("/.git"):
        return True
    return os.path.basename(path).startswith("inbox.db")


class FileHintWatcher:
    """Watches the roots of a set of monitors and reports which ones saw changes.

    ``on_hint`` is called on the event loop with the monitors whose roots hold (or are
    inside) a changed path, after the optional per-monitor filter, each with the
    changed paths that matter to it (None: unknown, walk everything). It is never
    called for changes inside ``.git`` folders or to ``inbox.db*`` files.
    """

    def __init__(
        self,
        on_hint: Callable[[Hinted], None],
        *,
        debounce_ms: int = DEBOUNCE_MS,
        step_ms: int = STEP_MS,
        backend: str = "auto",
        notifier_factory: NotifierFactory = default_notifier,
        watch_limit: int | None = None,
        rescan_s: float = RESCAN_S,
    ) -> None:
        """``backend`` ``auto`` is inotify on Linux (``notifier_factory`` makes its
        instance) and watchfiles elsewhere; ``watch_limit`` None reads the cap from the
        environment (see ``file_events_inotify``)."""
        self._on_hint = on_hint
        self._debounce_ms = debounce_ms
        self._step_ms = step_ms
        if backend not in ("auto", "inotify", "watchfiles"):
            raise ValueError(f"unknown file event backend {backend!r}")
        inotify = backend == "inotify" or (backend == "auto" and sys.platform.startswith("linux"))
        self._factory: NotifierFactory | None = notifier_factory if inotify else None
        self._watch_limit = watch_limit if watch_limit is not None else watch_limit_from_env()
        self._rescan_s = rescan_s
        self._tree: InotifyTree | None = None
        self._targets: dict[str, tuple[str, ...]] = {}
        self._filters: dict[str, HintFilter] = {}
        self._roots: tuple[str, ...] = ()
        self._task: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._failed_at: float | None = None
        self._disabled = os.environ.get(NO_EVENTS_ENV) == "1"
        self._problem: str | None = (
            f"file events are disabled ({NO_EVENTS_ENV}=1); changes are found by the "
            "periodic reconcile only"
            if self._disabled
            else None
        )

    @property
    def available(self) -> bool:
        """Whether change events can be delivered (no problem recorded)."""
        return self.problem is None

    @property
    def problem(self) -> str | None:
        """Why events are unavailable (or some folders are rescanned instead), when so."""
        if self._tree is not None:
            return self._tree.problem
        return self._problem

    @property
    def roots(self) -> tuple[str, ...]:
        """The folders being watched (recursively)."""
        running = self._tree is not None or (self._task is not None and not self._task.done())
        return self._roots if running else ()

    def state(self) -> dict[str, Any]:
        """The backend and its mode, for ``daemon status`` and ``doctor``."""
        if self._tree is not None:
            return self._tree.state()
        if self._task is not None and not self._task.done():
            return {"backend": "watchfiles", "mode": "events"}
        return {"backend": None, "mode": "off" if self._roots or self._disabled else "idle"}

    async def update(
        self,
        targets: Mapping[str, list[str]],
        filters: Mapping[str, HintFilter] | None = None,
    ) -> None:
        """Watch the roots of ``targets`` (monitor id -> root folders).

        The watcher restarts only when the union of roots changes (or, after a failure
        to start, once :data:`RETRY_AFTER_S` has passed). ``filters`` optionally narrow
        each monitor's hints (see :func:`hint_filter`).
        """
        self._targets = {
            monitor_id: tuple(os.path.normpath(os.path.abspath(root)) for root in roots)
            for monitor_id, roots in targets.items()
        }
        self._filters = dict(filters or {})
        if self._disabled:
            return
        roots = tuple(outermost(root for roots in self._targets.values() for root in roots))
        running = self._tree is not None or (self._task is not None and not self._task.done())
        if roots == self._roots:
            if running or not roots:
                return
            if self._failed_at is not None and time.monotonic() - self._failed_at < RETRY_AFTER_S:
                return
        await self._stop_task()
        self._roots = roots
        if not roots:
            return
        self._problem = None
        self._failed_at = None
        if self._factory is not None and await self._start_tree(roots, self._factory):
            return
        stop = asyncio.Event()
        self._stop = stop
        self._task = asyncio.create_task(self._run(roots, stop), name="agentmonitors-file-hints")
        # Let the task start watching, so a failure to start shows in ``problem`` now.
        await asyncio.sleep(0)

    async def close(self) -> None:
        """Stop watching."""
        await self._stop_task()
        self._roots = ()

    async def _start_tree(self, roots: tuple[str, ...], factory: NotifierFactory) -> bool:
        """Watch with inotify; False when it cannot be loaded here (then watchfiles)."""
        tree = InotifyTree(
            roots,
            self._dispatch,
            notifier_factory=factory,
            watch_limit=self._watch_limit,
            rescan_s=self._rescan_s,
        )
        try:
            await tree.start()
        except Exception as error:
            tree.close()
            self._factory = None  # the same failure would come back: watchfiles from now on
            logger.warning("inotify unavailable (%s); file events come from watchfiles", error)
            return False
        self._tree = tree
        return True

    async def _stop_task(self) -> None:
        tree, self._tree = self._tree, None
        if tree is not None:
            tree.close()
        task, stop = self._task, self._stop
        self._task = self._stop = None
        if task is None:
            return
        if stop is not None:
            stop.set()
        _done, pending = await asyncio.wait({task}, timeout=STOP_TIMEOUT_S)
        if pending:
            task.cancel()
            logger.warning("file watcher did not stop within %.0f s", STOP_TIMEOUT_S)

    async def _run(self, roots: tuple[str, ...], stop: asyncio.Event) -> None:
        try:
            try:
                await self._watch_through_undecodable(roots, stop)
            except PermissionError as error:
                # An unreadable folder inside a root should not cost every event.
                logger.warning(
                    "some folders under %s cannot be watched (%s); watching the rest",
                    ", ".join(roots),
                    error,
                )
                await self._watch(roots, stop, ignore_permission_denied=True)
        except asyncio.CancelledError:
            raise
        except Exception as error:
            self._problem = f"file events unavailable: {type(error).__name__}: {error}"
            self._failed_at = time.monotonic()
            logger.warning(
                "file watcher for %s failed; falling back to periodic reconciles: %s",
                ", ".join(roots),
                error,
            )
        else:
            logger.debug("file watcher for %s stopped", ", ".join(roots))

    async def _watch_through_undecodable(self, roots: tuple[str, ...], stop: asyncio.Event) -> None:
        """Watch; when the watcher stops on a changed name that is not UTF-8 (watchfiles
        cannot hand such a path over), hint every monitor and watch again, so one odd
        name costs a reconcile instead of every later event. A burst of such failures
        (more than :data:`UNDECODABLE_BURST` a second) gives up like any other failure."""
        restarts: list[float] = []
        while True:
            try:
                await self._watch(roots, stop, ignore_permission_denied=False)
                return
            except Exception as error:
                if stop.is_set() or not _undecodable_path(error):
                    raise
                now = time.monotonic()
                restarts = [at for at in restarts if now - at < 1.0] + [now]
                if len(restarts) > UNDECODABLE_BURST:
                    raise
                logger.info("a changed file name under %s is not UTF-8; rescanning", roots)
                self._rescan_all()

    async def _watch(
        self, roots: tuple[str, ...], stop: asyncio.Event, *, ignore_permission_denied: bool
    ) -> None:
        # Lazy: watchfiles costs 75 ms; only a daemon that watches files starts this.
        from watchfiles import awatch

        # Start-up failures (a missing root, inotify limits) raise before the first
        # await, so ``update`` sees them.
        async for changes in awatch(
            *roots,
            watch_filter=None,
            debounce=self._debounce_ms,
            step=self._step_ms,
            stop_event=stop,
            recursive=True,
            ignore_permission_denied=ignore_permission_denied,
        ):
            self._dispatch(path for _change, path in changes)
        if not stop.is_set():
            raise RuntimeError("watchfiles stopped unexpectedly")

    def _dispatch(self, paths: Iterable[str]) -> None:
        """Hint each monitor with the changed paths that may matter to it."""
        hinted: dict[str, set[str] | None] = {}
        for changed in paths:
            if _feedback(changed):
                continue
            path = os.path.normpath(changed)
            for monitor_id, roots in self._targets.items():
                if monitor_id in hinted and hinted[monitor_id] is None:
                    continue  # past the cap: it walks everything anyway
                if not any(contains(root, path) or contains(path, root) for root in roots):
                    continue
                matters = self._filters.get(monitor_id)
                try:
                    relevant = matters is None or matters(path)
                except Exception:
                    logger.exception("file hint filter for %s failed", monitor_id)
                    relevant = True
                if not relevant:
                    continue
                found = hinted.setdefault(monitor_id, set())
                if found is not None:
                    found.add(path)
                    if len(found) > HINTED_PATHS_MAX:
                        hinted[monitor_id] = None
        if hinted:
            self._send(
                {
                    monitor_id: None if found is None else frozenset(found)
                    for monitor_id, found in hinted.items()
                }
            )

    def _rescan_all(self) -> None:
        """Hint every monitor with "unknown": what changed cannot be told (a lost or
        unreadable event), so each walks its whole tree."""
        self._send(dict.fromkeys(self._targets))

    def _send(self, hinted: Hinted) -> None:
        try:
            self._on_hint(hinted)
        except Exception:
            logger.exception("file hint callback failed")


UNDECODABLE_BURST = 5
"""Restarts a second after names that are not UTF-8 before the watcher gives up."""


def _undecodable_path(error: BaseException) -> bool:
    """Whether ``error`` (or one inside its group) is watchfiles refusing a path that is
    not UTF-8."""
    inner = getattr(error, "exceptions", None)
    if isinstance(inner, tuple):
        return any(_undecodable_path(item) for item in inner)
    return "Unable to decode path" in str(error)


def glob_file_hints(config: Mapping[str, Any], workspace: str) -> FileHints:
    """The file-hints trait of a glob source: its globs' folders, filtered by its globs."""
    return FileHints(watch_roots(config, workspace), hint_filter(config, workspace))
