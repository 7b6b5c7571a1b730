"""One tick: every due monitor observed, paced, and its events stored.

A monitor that fails (bad definition, source error, storage error for one event)
is recorded and skipped; it never stops the others. Errors back the monitor off in
memory; the stored state of an errored monitor is left untouched so its baseline
survives.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from agentmonitors.catalog.definitions import DefinitionCache, Definitions, Problem
from agentmonitors.catalog.trust import BLOCKED_REASON, carry_over
from agentmonitors.clock import Clock, SystemClock, iso_from_ms
from agentmonitors.fastpath.lazy_logging import get_logger
from agentmonitors.fastpath.lean_dataclass import dataclass
from agentmonitors.monitor.policy import MonitorDefinition
from agentmonitors.runtime.backoff import backoff_of, failure_run
from agentmonitors.runtime.ephemeral import EphemeralDefinitions
from agentmonitors.runtime.ingest import Ingest, TickResult, error_message
from agentmonitors.runtime.liveness import Liveness
from agentmonitors.runtime.scheduling import retry_delay_ms, schedule_for
from agentmonitors.sources.base import SourceRegistry
from agentmonitors.sources.observation import ObservationContext, ObservationResult
from agentmonitors.store import queries, state_parts
from agentmonitors.store.database import Database
from agentmonitors.store.records import MonitorStateRow
from agentmonitors.store.suppressions import sweep_suppressions

if TYPE_CHECKING:
    import asyncio

    from agentmonitors.runtime.materialize import EventSink

log = get_logger("agentmonitors.runtime")

# TickResult lives with what it records (runtime/ingest.py); callers read it here.
__all__ = ["Runtime", "TickResult"]


@dataclass
class _Failures:
    count: int = 0
    retry_at_ms: int = 0
    last_message: str | None = None


class Runtime:
    """The runtime of one workspace: its store, its monitors and what it remembers between ticks."""

    def __init__(
        self,
        db: Database,
        workspace: str,
        registry: SourceRegistry,
        *,
        monitors_dir: str | None = None,
        clock: Clock | None = None,
        restore_backoff: bool = False,
        on_event: EventSink | None = None,
    ) -> None:
        self.db = db
        # A process that runs one tick (``daemon once``) reads backoff back from the
        # history; the daemon remembers it across its own ticks.
        self.restore_backoff = restore_backoff
        self.workspace = workspace
        self.registry = registry
        self.monitors_dir = monitors_dir
        self.clock: Clock = clock or SystemClock()
        self.definitions = DefinitionCache(registry)
        # A long-lived process (the daemon) sets this: sources may keep state in memory.
        self.resident = False
        self.ephemeral = EphemeralDefinitions(registry)
        self._failures: dict[str, _Failures] = {}
        # Monitors whose backoff was read back from the history already: once a process
        # is enough, its own failures are counted in ``_failures`` from then on.
        self._restored: set[str] = set()
        # Each monitor's cadence as of its last scheduling (ms): the least a retry waits.
        self._floors: dict[str, int] = {}
        # When this process last scheduled each monitor (wall ms): a cron fire between
        # that and now was missed while it ran (asleep, stopped) and is caught up once.
        self._checked_at: dict[str, int] = {}
        # What the runtime does not decide itself (docs/architecture.md): each stored
        # event goes to ``on_event`` inside its transaction (projection into sessions),
        # ``before_tick`` sweeps run first (idle sessions), ``after_tick`` callbacks
        # last (hook-state refresh, hint targets).
        self.storing = Ingest(db, workspace, on_event)
        # Silence and failures as events (runtime/liveness.py).
        self.liveness = Liveness(db, workspace, self.storing)
        self.before_tick: list[Callable[[int], None]] = []
        self.after_tick: list[Callable[[Definitions, TickResult], None]] = []
        self._known: dict[str, str] = {}
        # One tick at a time: a `daemon.tick` request arriving while the loop's own
        # tick awaits a source must not observe the same state twice (a change would
        # then be reported twice and the later state write would win).
        self._tick_lock: asyncio.Lock | None = None
        # When set, only these monitors exist for this runtime: ``verify``'s throwaway
        # daemon observes the one monitor it proves, never the project's others.
        self.only: frozenset[str] | None = None
        # Monitors of the running tick observed for file events alone, with the paths
        # that changed (docs/architecture.md, "Speed"): set by _due, read by _call.
        self._scoped: dict[str, frozenset[str]] = {}

    # ------------------------------------------------------------------ tick

    async def tick(
        self,
        force: Iterable[str] = (),
        force_sources: Iterable[str] = (),
        changed: Mapping[str, frozenset[str] | None] | None = None,
    ) -> TickResult:
        """Run one tick.

        ``force`` names monitors to observe now whatever their schedule (file-change
        hints); it also skips their backoff, as the change may be the fix.
        ``force_sources`` does the same for every monitor of those sources (a daemon
        that just started reconciles what changed while it was down). ``changed``
        gives forced monitors the paths their file events named (None: unknown); a
        monitor that is not due by its schedule gets them as
        ``ObservationContext.changed_paths``, and its observation does not count as
        its scheduled one, so the periodic full observation still comes on time.
        """
        # Lazy: ``daemon once`` (tick_blocking) never loads asyncio; whoever awaits this has.
        import asyncio

        if self._tick_lock is None:
            self._tick_lock = asyncio.Lock()
        async with self._tick_lock:
            now, definitions, due, result = self._begin(force, force_sources, changed)
            # Sources do their I/O concurrently; results come back in scan order.
            outcomes = await asyncio.gather(
                *(self._observe(monitor, state, now) for monitor, state in due),
                return_exceptions=True,
            )
            return self._finish(now, definitions, due, outcomes, result)

    def tick_blocking(self) -> TickResult:
        """One tick without an event loop of its own, for a process that runs just one
        (``daemon once``): what :meth:`tick` does, with the same results.

        Due monitors whose sources can observe in place (``observe_blocking``, as
        file-fingerprint does) are observed one after the other; only when one cannot
        are they all observed through asyncio, imported then, as :meth:`tick` would.
        Never while an event loop of this runtime ticks.
        """
        now, definitions, due, result = self._begin((), ())
        sources = [self.registry.traits(monitor.source_name) for monitor, _ in due]
        outcomes: list[ObservationResult | BaseException] = []
        if all(source.observes_in_place for source in sources):
            for (monitor, state), source in zip(due, sources, strict=True):
                try:
                    outcome = source.observe_blocking(*self._call(monitor, state, now))
                    outcomes.append(self._checked(monitor, outcome))
                except Exception as error:
                    outcomes.append(error)
        else:
            # Lazy: asyncio costs ``daemon once`` tens of ms; only a source that cannot
            # observe in place needs it.
            import asyncio

            async def observe_all() -> list[ObservationResult | BaseException]:
                return await asyncio.gather(
                    *(self._observe(monitor, state, now) for monitor, state in due),
                    return_exceptions=True,
                )

            outcomes = asyncio.run(observe_all())
        return self._finish(now, definitions, due, outcomes, result)

    def _begin(
        self,
        force: Iterable[str],
        force_sources: Iterable[str],
        changed: Mapping[str, frozenset[str] | None] | None = None,
    ) -> tuple[
        int, Definitions, list[tuple[MonitorDefinition, MonitorStateRow | None]], TickResult
    ]:
        """A tick up to observing: definitions, sweeps, problems, and the due monitors."""
        now = self.clock.now_ms()
        forced = set(force)
        forced_sources = set(force_sources)
        result = TickResult()
        definitions = self.definitions.load(self.workspace, self.monitors_dir)
        for sweep in self.before_tick:
            sweep(now)
        # After the sweeps: a watch whose session just went dormant is reaped and
        # must not be observed in this tick.
        definitions = self.ephemeral.merged(definitions, self.db, self.workspace, self.definitions)
        if self.only is not None:
            definitions = _restricted(definitions, self.only)
        if self.definitions.carried:
            # Best effort: an approval under the older key stays honoured until it is.
            with contextlib.suppress(OSError):
                carry_over(self.workspace, self.definitions.carried)
        self._forget_removed(definitions)
        for problem in definitions.problems:
            self._record_problem(problem, now, result)
        for blocked in definitions.blocked:
            # Never observed (its command never runs) until the user approves it.
            result.skipped_monitors.append(
                {"monitorId": blocked.monitor.id, "reason": BLOCKED_REASON}
            )

        events_only: set[str] = set()
        due = self._due(definitions, forced, forced_sources, now, result, events_only)
        # Only a monitor its schedule would not observe now, with no failure to retry,
        # answers its events alone; anything else is observed in full.
        self._scoped = {
            monitor_id: paths
            for monitor_id, paths in (changed or {}).items()
            if paths is not None and monitor_id in events_only
        }
        return now, definitions, due, result

    def _finish(
        self,
        now: int,
        definitions: Definitions,
        due: list[tuple[MonitorDefinition, MonitorStateRow | None]],
        outcomes: list[ObservationResult | BaseException],
        result: TickResult,
    ) -> TickResult:
        """Store what was observed, in scan order, then the after-tick sweeps."""
        for (monitor, state), outcome in zip(due, outcomes, strict=True):
            if isinstance(outcome, BaseException):
                if not isinstance(outcome, Exception):
                    raise outcome
                self._record_error(
                    monitor.id, monitor.source_name, error_message(outcome), now, result, monitor
                )
                continue
            try:
                self._ingest(monitor, state, outcome, now, result)
            except Exception as error:
                log.exception("storing observations of %s failed", monitor.id)
                self._record_error(
                    monitor.id, monitor.source_name, error_message(error), now, result, monitor
                )
            else:
                if outcome.failure is not None:
                    # Stored by _ingest with its events; here it is counted and backed off.
                    self._count_failure(monitor.id, outcome.failure, now, result)
                    self._liveness(self.liveness.failed, monitor, outcome.failure, now, result)
                else:
                    self._failures.pop(monitor.id, None)
                    self._liveness(self.liveness.succeeded, monitor, now, result)
        # After storing: a change observed in this tick ends a silence before it is judged.
        for monitor in definitions.runnable:
            if monitor.frontmatter.expect is not None:
                self._liveness(self.liveness.check_silence, monitor, now, result)

        sweep_suppressions(self.db, self.workspace, now)
        for callback in self.after_tick:
            try:
                callback(definitions, result)
            except Exception:
                log.exception("after-tick callback failed")
        return result

    def _due(
        self,
        definitions: Definitions,
        forced: set[str],
        forced_sources: set[str],
        now: int,
        result: TickResult,
        events_only: set[str] | None = None,
    ) -> list[tuple[MonitorDefinition, MonitorStateRow | None]]:
        """The monitors to observe now (with their stored state); the rest are skipped.

        ``events_only`` gets the forced monitors that neither their schedule nor a
        retry would observe now."""
        due: list[tuple[MonitorDefinition, MonitorStateRow | None]] = []
        for monitor in definitions.runnable:
            with self.db.read() as conn:
                # The source state is read only if the source asks for it (_call): a
                # large one is most of an unchanged tick's cost.
                state = queries.load_monitor_state(
                    conn, monitor.id, self.workspace, with_source_state=False
                )
            last = state.last_observation_at_ms if state else None
            traits = self.registry.traits(monitor.source_name)
            checked = self._checked_at.get(monitor.id)
            self._checked_at[monitor.id] = now
            schedule = schedule_for(traits, monitor.source_config, last, now, checked)
            if schedule.error is not None:
                self._record_error(
                    monitor.id, monitor.source_name, schedule.error, now, result, monitor
                )
                continue
            # A failure is never retried sooner than the monitor's own cadence would run it.
            self._floors[monitor.id] = schedule.next_poll_ms
            failures = self._failures.get(monitor.id)
            if failures is None and self.restore_backoff and monitor.id not in self._restored:
                self._restored.add(monitor.id)
                run = failure_run(self.db, monitor.id, self.workspace)
                self.liveness.knows(monitor.id, run.count)
                found = backoff_of(run, monitor.file_path, schedule.next_poll_ms)
                if found is not None:
                    failures = self._failures[monitor.id] = _Failures(*found)
            if monitor.id not in forced and monitor.source_name not in forced_sources:
                if failures is not None and failures.retry_at_ms > now:
                    result.skipped_monitors.append(
                        {"monitorId": monitor.id, "nextDueAt": iso_from_ms(failures.retry_at_ms)}
                    )
                    result.wake_at(failures.retry_at_ms)
                    self._release_when_not_due(monitor, state, now, result)
                    continue
                if not schedule.due:
                    # A last run after now (the clock set back) is no base.
                    base = last if last is not None and last <= now else now
                    result.skipped_monitors.append(
                        {
                            "monitorId": monitor.id,
                            "nextDueAt": iso_from_ms(base + schedule.next_poll_ms),
                        }
                    )
                    result.wake_at(base + schedule.next_poll_ms)
                    self._release_when_not_due(monitor, state, now, result)
                    continue
            elif (
                events_only is not None
                and failures is None
                and not schedule.due
                and monitor.source_name not in forced_sources
            ):
                events_only.add(monitor.id)
                # Its scheduled observation is still due from its last one.
                result.wake_at((last if last is not None else now) + schedule.next_poll_ms)
            result.evaluated_monitors.append(monitor.id)
            result.wake_at(now + schedule.next_poll_ms)
            due.append((monitor, state))
        return due

    async def _observe(
        self, monitor: MonitorDefinition, state: MonitorStateRow | None, now: int
    ) -> ObservationResult:
        source = self.registry.traits(monitor.source_name)
        return self._checked(monitor, await source.observe(*self._call(monitor, state, now)))

    def _call(
        self, monitor: MonitorDefinition, state: MonitorStateRow | None, now: int
    ) -> tuple[Any, ObservationContext]:
        """The arguments a source's observe gets: the config and the context."""
        # Only runnable monitors get here; still, what the observation may do beyond the
        # workspace is what the ledger allows, checked where it is done (permit.py).
        permit = self.definitions.permit_of(monitor, self.workspace)
        if state is None:
            return monitor.source_config, ObservationContext(
                None, now, self.workspace, monitor.id, permit=permit, resident=self.resident
            )

        def stored_state() -> Any:
            with self.db.read() as conn:
                return queries.load_source_state(conn, monitor.id, self.workspace)

        return monitor.source_config, ObservationContext.deferred(
            stored_state,
            now,
            self.workspace,
            monitor.id,
            permit=permit,
            previous_state_token=state.state_token,
            changed_paths=self._scoped.get(monitor.id),
            resident=self.resident,
            read_parts=state_parts.reader(self.db.read, monitor.id, self.workspace),
        )

    @staticmethod
    def _checked(monitor: MonitorDefinition, outcome: object) -> ObservationResult:
        if not isinstance(outcome, ObservationResult):
            raise TypeError(f'source "{monitor.source_name}" returned {type(outcome).__name__}')
        return outcome

    @property
    def on_event(self) -> EventSink | None:
        return self.storing.on_event

    @on_event.setter
    def on_event(self, sink: EventSink | None) -> None:
        self.storing.on_event = sink

    def _ingest(
        self,
        monitor: MonitorDefinition,
        state: MonitorStateRow | None,
        outcome: ObservationResult,
        now: int,
        result: TickResult,
    ) -> None:
        # An observation of file events alone is not the scheduled one: the full
        # observation stays due when the schedule says.
        last = state.last_observation_at_ms if state and monitor.id in self._scoped else None
        self.storing.observed(monitor, state, outcome, now, result, last_observation_at_ms=last)

    def _release_when_not_due(
        self,
        monitor: MonitorDefinition,
        state: MonitorStateRow | None,
        now: int,
        result: TickResult,
    ) -> None:
        problem = self.storing.release_when_not_due(monitor, state, now, result)
        if problem is not None:
            self._record_error(monitor.id, monitor.source_name, problem, now, result, monitor)

    # ------------------------------------------------------------------ errors

    def _record_error(
        self,
        monitor_id: str,
        source_name: str,
        message: str,
        now: int,
        result: TickResult,
        monitor: MonitorDefinition | None = None,
    ) -> None:
        self._count_failure(monitor_id, message, now, result)
        self._write_errored(monitor_id, source_name, message, now)
        if monitor is not None:
            self._liveness(self.liveness.failed, monitor, message, now, result)

    def _liveness(self, step: Callable[..., None], monitor: MonitorDefinition, *args: Any) -> None:
        """A liveness step (runtime/liveness.py); failing, it costs its event, never the tick."""
        try:
            step(monitor, *args)
        except Exception:
            log.exception("liveness of %s failed", monitor.id)

    def _count_failure(self, monitor_id: str, message: str, now: int, result: TickResult) -> None:
        """One more failure in a row: listed in the result, retried after the backoff."""
        result.errored_observations.append({"monitorId": monitor_id, "message": message})
        failures = self._failures.setdefault(monitor_id, _Failures())
        failures.count += 1
        failures.retry_at_ms = now + retry_delay_ms(failures.count, self._floors.get(monitor_id, 0))
        failures.last_message = message
        result.wake_at(failures.retry_at_ms)

    def _record_problem(self, problem: Problem, now: int, result: TickResult) -> None:
        """A definition that cannot run: listed every tick, written to history once per message."""
        result.errored_observations.append(
            {"monitorId": problem.monitor_id, "message": problem.message}
        )
        failures = self._failures.setdefault(problem.monitor_id, _Failures())
        if failures.last_message == problem.message:
            return
        failures.last_message = problem.message
        self._write_errored(problem.monitor_id, problem.source_name, problem.message, now)

    def _write_errored(self, monitor_id: str, source_name: str, message: str, now: int) -> None:
        try:
            with self.db.write() as conn:
                queries.add_history(
                    conn,
                    monitor_id=monitor_id,
                    workspace=self.workspace,
                    source_name=source_name,
                    result="errored",
                    data={"error": message},
                    now_ms=now,
                )
        except Exception:
            # History is an audit trail; failing to write it must not stop the tick.
            log.warning("could not record the error of %s", monitor_id, exc_info=True)

    def failure_of(self, monitor_id: str) -> tuple[int, int, str | None]:
        """(consecutive failures, retry at ms, last message) for ``monitor explain``."""
        failures = self._failures.get(monitor_id)
        if failures is None:
            return 0, 0, None
        return failures.count, failures.retry_at_ms, failures.last_message

    # ------------------------------------------------------------------ housekeeping

    def _forget_removed(self, definitions: Definitions) -> None:
        """Let sources drop per-monitor caches of monitors that no longer run."""
        current = {monitor.id: monitor.source_name for monitor in definitions.runnable}
        for monitor_id, source_name in self._known.items():
            if current.get(monitor_id) == source_name:
                continue
            self.registry.traits(source_name).forget(monitor_id)
        self._known = current
        for monitor_id in [key for key in self._floors if key not in current]:
            del self._floors[monitor_id]
        for monitor_id in [key for key in self._failures if key not in current]:
            if not any(problem.monitor_id == monitor_id for problem in definitions.problems):
                del self._failures[monitor_id]
        self.liveness.forget(current.__contains__)


def _restricted(definitions: Definitions, only: frozenset[str]) -> Definitions:
    """``definitions`` with every monitor outside ``only`` left out."""
    return Definitions(
        runnable=tuple(monitor for monitor in definitions.runnable if monitor.id in only),
        problems=tuple(problem for problem in definitions.problems if problem.monitor_id in only),
        blocked=tuple(item for item in definitions.blocked if item.monitor.id in only),
    )
