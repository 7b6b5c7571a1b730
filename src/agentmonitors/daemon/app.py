"""The per-workspace daemon: a socket server, the tick loop, file hints and idle reaping."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import time
from collections.abc import Callable, Mapping
from typing import Any

from agentmonitors.catalog.definitions import Definitions
from agentmonitors.clock import Clock, SystemClock, iso_from_ms
from agentmonitors.daemon.boot import open_boot_session
from agentmonitors.daemon.channels import attached_until
from agentmonitors.daemon.codex_wake import CodexWaker
from agentmonitors.daemon.compose import workspace_runtime
from agentmonitors.daemon.db_lock import DatabaseLock
from agentmonitors.daemon.heap import HeapTrimmer
from agentmonitors.daemon.live_waits import LiveWaits
from agentmonitors.daemon.method_table import method_table
from agentmonitors.daemon.retention import RetentionRunner
from agentmonitors.daemon.server import DaemonServer, RequestError
from agentmonitors.daemon.store_reopen import reopen_store
from agentmonitors.delivery.service import DeliveryService
from agentmonitors.fastpath.lean_dataclass import dataclass
from agentmonitors.runtime.tick import TickResult
from agentmonitors.sources.base import SourceRegistry
from agentmonitors.sources.file_hints import FileHintWatcher
from agentmonitors.store import queries
from agentmonitors.store.database import Database, StoreError
from agentmonitors.workspace import DEFAULT_POLL_MS, DEFAULT_REAP_AFTER_MS

log = logging.getLogger("agentmonitors.daemon")

BOOT_GRACE_MS = 10_000
REFRESH_QUIET_S = 0.2
REFRESH_MAX_DELAY_S = 1.0
# The shortest gap between two scheduled ticks: a monitor due "now" again (a clock
# that stands still in a test, an interval of a few milliseconds) must not spin.
MIN_TICK_GAP_MS = 100


@dataclass(frozen=True)
class DaemonOptions:
    workspace: str
    monitors_dir: str | None
    socket_path: str
    db_path: str
    poll_ms: int = DEFAULT_POLL_MS
    reap_after_ms: int = DEFAULT_REAP_AFTER_MS
    # ``(adapter, host session id)`` of the session whose ``session start`` spawned this
    # daemon: registered before the first tick, so a failure that first check finds
    # reaches it (docs/architecture.md, "Processes we start").
    boot_session: tuple[str, str] | None = None
    # ``verify``'s throwaway daemon runs only the monitor it proves.
    only_monitor: str | None = None


def tick_summary(result: TickResult, *, verb: str) -> str | None:
    """The line a running daemon prints after a tick that did something."""
    emitted, errored = result.emitted_event_ids, result.errored_observations
    if not emitted and not errored:
        return None
    head = f"{verb} {len(emitted)} event(s) from {len(result.evaluated_monitors)} monitor(s)"
    if not errored:
        return head + "."
    lines = [f"{head}, {len(errored)} errored:"]
    lines += [f"  {item['monitorId']}: {item['message']}" for item in errored]
    return "\n".join(lines)


async def _cancelled(task: asyncio.Task[None] | None) -> None:
    if task is not None:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


class Daemon:
    def __init__(
        self,
        options: DaemonOptions,
        registry: SourceRegistry,
        *,
        clock: Clock | None = None,
        out: Callable[[str], None] = print,
    ) -> None:
        self.options = options
        self.registry = registry
        self.clock: Clock = clock or SystemClock()
        self.out = out
        self._heap = HeapTrimmer()
        self.db = Database(options.db_path)
        self.runtime = workspace_runtime(
            self.db,
            options.workspace,
            registry,
            monitors_dir=options.monitors_dir,
            clock=self.clock,
            # A daemon started while a monitor fails keeps its backoff and its count.
            restore_backoff=True,
        )
        if options.only_monitor is not None:
            self.runtime.only = frozenset({options.only_monitor})
        # The daemon observes each monitor again and again: sources may keep state.
        self.runtime.resident = True
        self.delivery = DeliveryService(self.db, self.clock)
        self.delivery.request_refresh = self._schedule_refresh
        self.delivery.project_folder = options.workspace
        # Followers wait on these (``delivery.wait``) instead of polling the store.
        self.waits = LiveWaits(self.delivery, self.clock)
        self._refresh_pending: set[str] = set()
        self._refresh_first_at = 0.0
        self._refresh_handle: asyncio.TimerHandle | None = None
        self.runtime.after_tick.append(self._after_tick)
        self.runtime.after_tick.append(
            lambda definitions, result: self.delivery.refresh_all(options.workspace)
        )
        self.runtime.after_tick.append(self._tell_waits)
        self.started_at_ms = self.clock.now_ms()
        # Pruning rides on the ticks (daemon/retention.py); verify's daemon keeps all.
        self.retention = RetentionRunner(self.db, options.workspace, self.clock, out)
        if options.only_monitor is None:
            self.runtime.after_tick.append(self.retention.after_tick)
        self._wake = asyncio.Event()
        self._stop = asyncio.Event()
        # Monitors to observe at the next wake, each with the paths its file events
        # named (None: unknown, observe everything).
        self._hinted: dict[str, frozenset[str] | None] = {}
        self._idle_since_ms = self.started_at_ms
        self._seen_session = False
        # Set by a delivery request (a session's state changed): activity for the reaper.
        self._session_activity = False
        # The clock time at which idleness would have lasted long enough to reap.
        self._reap_at_ms: int | None = None
        self._codex: CodexWaker | None = None
        self._hints: Any = None
        self._hint_targets: dict[str, list[str]] = {}
        self._hint_filters: dict[str, Any] = {}
        self._last_errored: set[tuple[str, str]] = set()
        # Set when the database file was deleted or replaced under the daemon.
        self.store_reopened: dict[str, Any] | None = None
        self.server = DaemonServer(options.socket_path, method_table(self))

    # ------------------------------------------------------------------ for the methods

    def require_store(self) -> None:
        if not self.check_store():
            raise RequestError(
                f"database {self.options.db_path} cannot be reopened; the daemon is stopping"
            )

    # ------------------------------------------------------------------ loop

    def _schedule_refresh(self, session_id: str) -> None:
        """Refresh a session's hook-state file once requests have paused.

        The file is a cache for other tools, never read on the delivery path; writing
        it right after each reply would make the next hook call of a quick sequence
        (reserve, commit, the next prompt) wait for it. It is written after 200 ms
        without requests, and never more than a second late.
        """
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not inside the loop (a direct call): do it now
            self.delivery.refresh_hook_state(session_id)
            return
        # A session's state changed: its follower's wait answers, and the reaper
        # judges again (a session may have ended).
        self.waits.changed(session_id)
        self._session_activity = True
        self._wake.set()
        if self._codex is not None:
            self._codex.nudge()
        now = loop.time()
        if not self._refresh_pending:
            self._refresh_first_at = now
        self._refresh_pending.add(session_id)
        if self._refresh_handle is not None:
            self._refresh_handle.cancel()
        delay = min(REFRESH_QUIET_S, max(0.0, self._refresh_first_at + REFRESH_MAX_DELAY_S - now))
        self._refresh_handle = loop.call_later(delay, self._flush_refreshes)

    def _flush_refreshes(self) -> None:
        self._refresh_handle = None
        pending, self._refresh_pending = self._refresh_pending, set()
        for session_id in sorted(pending):
            self.delivery.refresh_hook_state(session_id)

    def request_stop(self) -> None:
        self._stop.set()
        self._wake.set()
        self.waits.close()

    def _tell_waits(self, definitions: Definitions, result: TickResult | None) -> None:
        """Stored events were projected into every session; and any wait may be due now
        (the clock moved)."""
        del definitions
        if result is None or result.emitted_event_ids:
            self.waits.changed(None)
        else:
            self.waits.poke()

    def hint(self, hinted: Mapping[str, frozenset[str] | None]) -> None:
        """Observe these monitors at the next wake (a file event, a new watch), each
        with the paths that changed (None: unknown, so everything)."""
        for monitor_id, paths in hinted.items():
            known = self._hinted.get(monitor_id, frozenset())
            self._hinted[monitor_id] = None if paths is None or known is None else known | paths
        if hinted:
            self._wake.set()

    def file_events_status(self) -> dict[str, Any]:
        hints = self._hints
        if hints is None:
            return {"available": False, "problem": "not started"}
        return {"available": bool(hints.available), "problem": hints.problem, **hints.state()}

    def _after_tick(self, definitions: Definitions, result: TickResult | None) -> None:
        """Recompute which folders to watch for the monitors that can run now.

        A monitor's source says which file events may matter to it (its ``file_hints``
        trait); monitors of other sources are never hinted.
        """
        del result
        targets: dict[str, list[str]] = {}
        filters: dict[str, Any] = {}
        for monitor in definitions.runnable:
            traits = self.registry.traits(monitor.source_name)
            try:
                hints = traits.file_hints(monitor.source_config, self.options.workspace)
            except Exception:
                log.warning("cannot watch %s for changes", monitor.id, exc_info=True)
                continue
            if hints is not None:
                targets[monitor.id] = list(hints.roots)
                filters[monitor.id] = hints.matters
        # A monitor whose watched folders changed (new globs, a folder created) is
        # reconciled once more after the new watch is in place, so nothing falls
        # between the old watch and the new one.
        self.hint(
            {
                monitor_id: None
                for monitor_id, roots in targets.items()
                if self._hint_targets.get(monitor_id) not in (None, roots)
            }
        )
        self._hint_targets = targets
        self._hint_filters = filters

    async def _start_serving(self, loop: asyncio.AbstractEventLoop) -> DatabaseLock:
        """Install the signal handlers, take the database lock, bind the socket."""
        # Handlers first: a signal that arrives as soon as the socket answers must
        # still end in a clean stop.
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, self.request_stop)
        # One daemon per database, whatever its socket (daemon/db_lock.py): taken before
        # the socket, so a second daemon never binds, and held until the store is closed.
        database_lock = DatabaseLock(self.options.db_path, self.options.socket_path)
        try:
            database_lock.acquire()
            await self.server.start()
        except BaseException:
            database_lock.release()  # a no-op when it was not taken
            for signum in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(signum)
            raise
        return database_lock

    async def run(self) -> int:
        """Serve until stopped; returns the process exit code."""
        loop = asyncio.get_running_loop()
        database_lock = await self._start_serving(loop)
        if self.options.boot_session is not None:
            open_boot_session(self.delivery, self.options.boot_session, self.options.workspace)
        self.out(f"AgentMon daemon listening on {self.options.socket_path}")
        self._hints = FileHintWatcher(self.hint)
        serving = asyncio.create_task(self.server.serve_forever())
        waking = self._start_codex_wake()
        try:
            # Watch first, then reconcile every file monitor: a change made while no
            # daemon ran is found by the reconcile, one made from now on by the watch.
            initial = self.runtime.definitions.load(
                self.options.workspace, self.options.monitors_dir
            )
            self._after_tick(initial, None)
            await self._hints.update(self._hint_targets, self._hint_filters)
            # Changes made while no daemon ran come with no event: every hinted monitor
            # is reconciled on the first tick.
            force_sources = tuple(
                sorted({m.source_name for m in initial.runnable if m.id in self._hint_targets})
            )
            next_tick = 0.0
            # The store's file identity is checked on every wake: each tick, each
            # delivery request, and when idleness may have lasted long enough to reap.
            while not self._stop.is_set() and self.workspace_present() and self.check_store():
                if self._hinted or time.monotonic() >= next_tick:
                    forced, self._hinted = self._hinted, {}
                    started = time.monotonic()
                    result = await self._tick_once(forced, force_sources)
                    next_tick = started + self._next_tick_delay_s(result)
                    force_sources = ()
                    await self._hints.update(self._hint_targets, self._hint_filters)
                if self._should_reap():
                    self.out("AgentMon daemon idle with no active session; stopping.")
                    break
                if self._hinted or self._stop.is_set():
                    continue
                self._wake.clear()  # nothing pending: the next set() is news
                timeout = max(0.0, next_tick - time.monotonic())
                if self._reap_at_ms is not None:
                    # Reaping is judged when it may be due, not on a fixed beat: a
                    # session's request wakes the loop, a channel's heartbeat says
                    # until when it holds the daemon (docs/architecture.md, "Idle cost").
                    until_reap = (self._reap_at_ms - self.clock.now_ms()) / 1000
                    timeout = min(timeout, max(0.0, until_reap))
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), timeout)
        finally:
            for signum in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(signum)
            await _cancelled(waking)
            await self._hints.close()
            await self.server.close()
            serving.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await serving
            if self._refresh_handle is not None:
                self._refresh_handle.cancel()
            self._flush_refreshes()
            self.retention.close()
            self.db.close()
            database_lock.release()
        return 0

    def _start_codex_wake(self) -> asyncio.Task[None] | None:
        """The codex-queue runner (daemon/codex_wake.py); not for verify's throwaway daemon."""
        if self.options.only_monitor is not None:
            return None
        waker = CodexWaker(self.delivery, self.options.workspace, self.options.socket_path)
        self._codex = waker
        self.runtime.after_tick.append(lambda definitions, result: waker.nudge())
        return asyncio.create_task(waker.run(self._stop))

    def workspace_present(self) -> bool:
        """Whether the project folder is still there; a daemon whose project was deleted
        stops rather than serve, and recreate the folders of, a project nobody has."""
        if os.path.isdir(self.options.workspace):
            return True
        self.out(f"AgentMon workspace {self.options.workspace} no longer exists; stopping.")
        return False

    def check_store(self) -> bool:
        """Reopen the database when its file was deleted or replaced under the daemon
        (``daemon/store_reopen.py``).

        Either way the log and ``daemon status`` say so; a store that cannot be reopened
        stops the daemon, so the next hook boots one that reports the problem. Returns
        whether the store is usable.
        """
        problem = self.db.file_problem()
        if problem is None:
            return True
        path = self.options.db_path
        try:
            kept = reopen_store(self.db, problem)
        except StoreError as error:
            self.out(
                f"AgentMon database {path} was {problem} while the daemon ran and cannot be"
                f" reopened ({error}); stopping."
            )
            self.request_stop()
            return False
        # Leases held rows of the old store; they mean nothing in this one.
        self.delivery.reservations.clear()
        self.store_reopened = {
            "reason": problem,
            "at": iso_from_ms(self.clock.now_ms()),
            "sessionsKept": kept,
        }
        what = "a fresh one" if problem == "deleted" else "the file now there"
        self.out(
            f"AgentMon database {path} was {problem} while the daemon ran; reopened"
            f" {what} ({kept} session(s) carried over; events stored before are not)."
        )
        return True

    async def _tick_once(
        self, forced: Mapping[str, frozenset[str] | None], force_sources: tuple[str, ...]
    ) -> TickResult | None:
        try:
            result = await self.runtime.tick(forced, force_sources, forced)
        except Exception as error:
            # A log record, not an ``out`` line: the same failure every tick is counted
            # in the log, not repeated (docs/architecture.md, "The daemon's log").
            log.debug("tick failed", exc_info=True)
            log.error("AgentMon runtime tick failed: %s", error)
            return None
        self.report(result)
        # Freed memory goes back after work done anyway (docs/architecture.md, "Memory
        # over weeks"); a failed tick frees little.
        self._heap.after_work()
        return result

    def _next_tick_delay_s(self, result: TickResult | None) -> float:
        """The poll interval, or sooner when a monitor, a retry or a settle window is due."""
        delay_ms = self.options.poll_ms
        if result is not None and result.next_wake_ms is not None:
            until = result.next_wake_ms - self.clock.now_ms()
            delay_ms = min(delay_ms, max(MIN_TICK_GAP_MS, until))
        return delay_ms / 1000

    def report(self, result: TickResult) -> None:
        """Log what a tick emitted or what failed, from the loop or asked for over IPC."""
        # A broken monitor errors on every tick; say so when it starts or changes,
        # not once a second in the log.
        errored = {(item["monitorId"], item["message"]) for item in result.errored_observations}
        news = bool(result.emitted_event_ids) or errored != self._last_errored
        self._last_errored = errored
        summary = tick_summary(result, verb="Emitted")
        if summary is not None and news:
            self.out(summary)

    def _should_reap(self) -> bool:
        """Whether idleness lasted long enough; sets when to judge again otherwise.

        Idle means no active session, no delivery request and no fresh channel or
        follower heartbeat for this daemon. While a session is active only a request
        or a tick (dormancy) can end that, and both wake the loop, so no timer is set;
        a heartbeat holds the daemon until it goes stale, so the next look is then.
        """
        reap_after = self.options.reap_after_ms
        self._reap_at_ms = None
        if reap_after <= 0:
            return False
        now = self.clock.now_ms()
        # A clock set back since idling began would stretch the wait by the jump.
        self._idle_since_ms = min(self._idle_since_ms, now)
        if self._session_activity:
            self._session_activity = False
            self._idle_since_ms = max(self._idle_since_ms, now)
        counts = queries.session_counts(self.db, self.options.workspace)
        if counts["total"]:
            self._seen_session = True
        if counts["active"] > 0:
            self._idle_since_ms = now
            return False
        held_until = attached_until(self.options.socket_path, self.options.workspace, now)
        if held_until is not None:
            self._idle_since_ms = max(self._idle_since_ms, held_until)
        limit = reap_after if self._seen_session else max(reap_after, BOOT_GRACE_MS)
        if now - self._idle_since_ms >= limit:
            return True
        self._reap_at_ms = self._idle_since_ms + limit
        return False
