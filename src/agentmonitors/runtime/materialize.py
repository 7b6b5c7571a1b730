"""Materialization: an emitted envelope becomes one durable event row.

The event, its snapshot row and whatever the composer attaches (the daemon projects
the event into its sessions) are written in one transaction, so a crash leaves either
all of them or none.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

from agentmonitors.diff import build_diff
from agentmonitors.fastpath.lazy_logging import get_logger
from agentmonitors.fastpath.ulid import new_id
from agentmonitors.runtime.notify import Envelope
from agentmonitors.runtime.shape import Shaped, shape_observation
from agentmonitors.store.queries import insert_event, insert_snapshot, latest_snapshot
from agentmonitors.store.records import EventRow

log = get_logger("agentmonitors.runtime.materialize")

# Called with (connection, the stored event, the object's previous snapshot text or
# None, now ms) inside the event's transaction.
EventSink = Callable[[sqlite3.Connection, EventRow, str | None, int], object]


def event_row(
    envelope: Envelope,
    workspace: str | None,
    event_id: str,
    diff_text: str | None,
    shaped: Shaped | None = None,
) -> EventRow:
    """The row for ``envelope`` (the field rules of the event contract).

    ``shaped`` is what Shape made of the observation; without it the observation's
    own text and payload are used.
    """
    monitor = envelope.monitor
    observation = envelope.observation
    if shaped is None:
        shaped = Shaped(observation.snapshot_text)
    payload = shaped.payload if shaped.has_payload else None
    if payload is None:
        payload = observation.payload if observation.payload is not None else {}
    query_scope: dict[str, Any] = dict(observation.query_scope or {})
    if observation.change_kind is not None:
        query_scope["changeKind"] = observation.change_kind
    return EventRow(
        id=event_id,
        workspace_path=workspace,
        monitor_id=monitor.id,
        source_name=monitor.source_name,
        urgency=envelope.effective_urgency,
        title=monitor.name if monitor.name is not None else observation.title,
        body=_body(observation.body, monitor.instructions, observation.detail),
        summary=next(
            text
            for text in (observation.summary, observation.body, observation.title)
            if text is not None
        ),
        payload=payload,
        snapshot_metadata=observation.snapshot if observation.snapshot is not None else {},
        snapshot_text=shaped.snapshot_text,
        diff_text=diff_text,
        object_key=observation.object_key if observation.object_key is not None else monitor.id,
        baseline_strategy=monitor.baseline_strategy,
        query_scope=query_scope,
        tags=list(monitor.tags),
        created_at=envelope.observed_at_ms // 1000,
    )


def _body(authored: str | None, instructions: str, detail: str | None) -> str:
    """The event's body: the observation's own or the monitor's instructions, after
    the observation's ``detail`` (why it failed) when it has one."""
    body = authored if authored is not None else instructions
    if not detail:
        return body
    return f"{detail}\n\n{body}" if body.strip() else detail


def _strategy(snapshot: Any) -> str | None:
    if isinstance(snapshot, dict) and isinstance(snapshot.get("strategy"), str):
        return str(snapshot["strategy"])
    return None


def materialize(
    conn: sqlite3.Connection,
    envelope: Envelope,
    workspace: str | None,
    now_ms: int,
    on_event: EventSink | None = None,
) -> EventRow:
    """Write one event with its projections and snapshot, inside the caller's transaction.

    Shape runs here, at the envelope's ``observedAt``, with the definition captured
    when it was observed; a failing jq transform fails this event only.
    """
    observation = envelope.observation
    monitor = envelope.monitor
    shaped = shape_observation(observation, envelope.observed_at_ms, monitor.shape, monitor.payload)
    text = shaped.snapshot_text
    object_key = observation.object_key if observation.object_key is not None else monitor.id
    previous = (
        latest_snapshot(conn, workspace, monitor.id, object_key) if text is not None else None
    )
    diff = (
        build_diff(previous, text, _strategy(observation.snapshot))
        if previous is not None and text is not None
        else None
    )
    event = event_row(envelope, workspace, new_id(now_ms), diff, shaped)
    insert_event(conn, event)
    if on_event is not None:
        on_event(conn, event, previous, now_ms)
    if event.snapshot_text is not None:
        insert_snapshot(
            conn,
            workspace=workspace,
            monitor_id=event.monitor_id,
            object_key=object_key,
            event_id=event.id,
            content=event.snapshot_text,
            now_ms=now_ms,
        )
    return event
