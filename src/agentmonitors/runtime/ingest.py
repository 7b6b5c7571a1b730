"""Storing what one monitor's observation (or its held pacing) produced.

A tick (``runtime/tick.py``) decides what is due and observes it; this stores the
outcome: the CEL gate, pacing, the monitor's state row, its history row, the first
snapshots of a baseline and every materialized event, in one transaction, so a crash
keeps all or none (docs/architecture.md, "The life of one event").
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any

from agentmonitors.fastpath.lazy_logging import get_logger
from agentmonitors.fastpath.lean_dataclass import dataclass, field
from agentmonitors.monitor.policy import MonitorDefinition, RollupPolicy
from agentmonitors.runtime.baselines import keep_baselines
from agentmonitors.runtime.notify import CapturedMonitor, Envelope, dispatch, envelope_for, rollup
from agentmonitors.runtime.shape import passes_gate
from agentmonitors.runtime.wake import pacing_due_ms, settle_due_ms
from agentmonitors.sources.observation import ObservationResult
from agentmonitors.store import queries
from agentmonitors.store.database import Database
from agentmonitors.store.records import MonitorStateRow

if TYPE_CHECKING:
    from agentmonitors.runtime.materialize import EventSink

log = get_logger("agentmonitors.runtime")


@dataclass
class TickResult:
    evaluated_monitors: list[str] = field(default_factory=list)
    emitted_event_ids: list[str] = field(default_factory=list)
    errored_observations: list[dict[str, str]] = field(default_factory=list)
    skipped_monitors: list[dict[str, str]] = field(default_factory=list)
    # When something next needs a tick (a monitor due, a retry, a settle window that
    # ends); not part of the JSON shape. The daemon wakes then instead of waiting for
    # its poll interval, so short intervals and settle windows are honoured.
    next_wake_ms: int | None = None

    def wake_at(self, at_ms: int | None) -> None:
        if at_ms is not None and (self.next_wake_ms is None or at_ms < self.next_wake_ms):
            self.next_wake_ms = at_ms

    def to_json(self) -> dict[str, Any]:
        return {
            "evaluatedMonitors": self.evaluated_monitors,
            "emittedEventIds": self.emitted_event_ids,
            "erroredObservations": self.errored_observations,
            "skippedMonitors": self.skipped_monitors,
        }


def error_message(error: BaseException) -> str:
    text = str(error).strip()
    return text or type(error).__name__


class Ingest:
    """What a tick stores for one monitor, in the runtime's database and workspace.

    ``on_event`` gets each stored event inside its transaction (projection into
    sessions); the runtime sets it (docs/architecture.md).
    """

    def __init__(self, db: Database, workspace: str, on_event: EventSink | None) -> None:
        self.db = db
        self.workspace = workspace
        self.on_event = on_event

    def observed(
        self,
        monitor: MonitorDefinition,
        state: MonitorStateRow | None,
        outcome: ObservationResult,
        now: int,
        result: TickResult,
        *,
        last_observation_at_ms: int | None = None,
    ) -> None:
        """Store an observation's state, history and events in one transaction;
        ``last_observation_at_ms`` (default ``now``) is what the schedule counts from."""
        captured = CapturedMonitor.of(monitor)
        # The CEL gate runs before Pace: a gated-out observation counts as observed
        # but touches no notify state and makes no event.
        passed = [
            item for item in outcome.observations if passes_gate(monitor.frontmatter.payload, item)
        ]
        envelopes = [envelope_for(captured, item, now) for item in passed]
        notify_state = dict(state.notify_state) if state is not None else {}
        paced = dispatch(monitor.frontmatter.notify, captured, envelopes, now, notify_state)
        observed, emitted = len(outcome.observations), len(paced.emitted)
        kept = not outcome.has_next_state and state is not None
        next_source_state = (
            outcome.next_state
            if outcome.has_next_state
            else (state.source_state if state is not None else None)
        )
        data: dict[str, Any] = {"observed": observed, "emitted": emitted}
        if outcome.failure is not None:
            # The monitor is failing, with this reason, until an observation succeeds
            # (doctor, explain and the backoff read it from this row).
            verdict = "errored"
            data["error"] = outcome.failure
        elif emitted:
            verdict = "triggered"
        elif observed:
            verdict = "suppressed"
        else:
            verdict = outcome.outcome or "no-change"
        # State, audit row and events commit together: a crash can lose neither the
        # baseline advance nor the events it produced, only both.
        with self.db.write() as conn:
            queries.save_monitor_state(
                conn,
                monitor.id,
                self.workspace,
                now_ms=now,
                last_observation_at_ms=now
                if last_observation_at_ms is None
                else last_observation_at_ms,
                source_state=next_source_state,
                notify_state=paced.state,
                source_unchanged=kept,
                # A token describes a state the source saw or made, never the {} stored
                # for a first observation that kept "nothing".
                state_token=outcome.state_token if kept or outcome.has_next_state else None,
            )
            self.history(monitor, verdict, data, now, conn)
            if outcome.baselines or outcome.baseline_texts is not None:
                keep_baselines(
                    conn, monitor, outcome.baselines, self.workspace, now, outcome.baseline_texts
                )
            self.materialize_all(monitor, paced.emitted, now, result, conn)
        result.wake_at(pacing_due_ms(monitor.frontmatter.notify, paced.state, now))

    def materialize_all(
        self,
        monitor: MonitorDefinition,
        emitted: list[Envelope],
        now: int,
        result: TickResult,
        conn: sqlite3.Connection,
    ) -> None:
        if not emitted:
            return
        # Lazy: the diff and shape modules cost ``daemon once`` ~20 ms; only an event needs them.
        from agentmonitors.runtime.materialize import materialize

        for envelope in emitted:
            conn.execute("SAVEPOINT event")
            try:
                event = materialize(conn, envelope, self.workspace, now, self.on_event)
            except Exception as error:
                conn.execute("ROLLBACK TO event")
                conn.execute("RELEASE event")
                log.exception("materializing an event of %s failed", monitor.id)
                self.history(monitor, "errored", {"error": error_message(error)}, now, conn)
                continue
            conn.execute("RELEASE event")
            result.emitted_event_ids.append(event.id)

    def release_when_not_due(
        self,
        monitor: MonitorDefinition,
        state: MonitorStateRow | None,
        now: int,
        result: TickResult,
    ) -> str | None:
        """Emit what pacing holds once its time comes, whether or not the source is due.

        A rollup fires in its window minute; a debounce (the default 15 s settle of a
        high observation included) ends when its settle window does, not at the
        source's next poll, which for an api-poll monitor can be minutes away.
        Returns why the monitor's pacing cannot run (the tick records it as an error).
        """
        notify = monitor.frontmatter.notify
        previous = dict(state.notify_state) if state is not None else {}
        if not isinstance(notify, RollupPolicy):
            due = settle_due_ms(previous, now)
            if due is None:
                return None
            if due > now:
                result.wake_at(due)
                return None
        try:
            if isinstance(notify, RollupPolicy):
                paced = rollup(notify, CapturedMonitor.of(monitor), [], now, previous)
            else:
                paced = dispatch(notify, CapturedMonitor.of(monitor), [], now, previous)
        except ValueError as error:
            return str(error)
        result.wake_at(pacing_due_ms(notify, paced.state, now))
        if paced.state == previous and not paced.emitted:
            return None
        with self.db.write() as conn:
            queries.save_monitor_state(
                conn,
                monitor.id,
                self.workspace,
                now_ms=now,
                notify_state=paced.state,
                notify_only=True,
            )
            if paced.emitted:
                self.history(
                    monitor, "triggered", {"observed": 0, "emitted": len(paced.emitted)}, now, conn
                )
                self.materialize_all(monitor, paced.emitted, now, result, conn)
        return None

    def history(
        self,
        monitor: MonitorDefinition,
        verdict: str,
        data: dict[str, Any],
        now: int,
        conn: sqlite3.Connection,
    ) -> None:
        queries.add_history(
            conn,
            monitor_id=monitor.id,
            workspace=self.workspace,
            source_name=monitor.source_name,
            result=verdict,
            data=data,
            now_ms=now,
        )
