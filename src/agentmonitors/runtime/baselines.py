"""What a baseline saw of each object, kept as that object's first snapshot.

A first observation emits no event, yet the first change after it must be shown as a
diff (docs/architecture.md, "Life of an event", step 2). Kept apart from
`runtime/materialize.py` so a plain baseline tick loads nothing an event needs.
"""

from __future__ import annotations

import sqlite3

from agentmonitors.fastpath.lazy_logging import get_logger
from agentmonitors.monitor.policy import MonitorDefinition
from agentmonitors.runtime.shape import shape_observation
from agentmonitors.sources.observation import Observation
from agentmonitors.store import baseline_packs
from agentmonitors.store.queries import has_snapshots, insert_snapshots, latest_snapshot

log = get_logger("agentmonitors.runtime.baselines")

BASELINE_EVENT_ID = ""
"""The ``event_id`` of a snapshot kept from a baseline: no event carried it."""

PACK_FROM_OBJECTS = 100
"""A first baseline of this many objects or more is stored packed; a smaller one, a row
per object as every later snapshot is (each has its own id and time for the agent's
``snapshot``/``diff`` verbs, and a few rows cost nothing)."""


def keep_baselines(
    conn: sqlite3.Connection,
    monitor: MonitorDefinition,
    baselines: list[Observation],
    workspace: str | None,
    now_ms: int,
) -> None:
    """Keep what a baseline saw of each object as its snapshot (inside the caller's
    transaction), so the object's first change is diffed against it.

    Shaped as that change will be (a ``rendered`` shape diffs its artifact, not the
    source's text); a text equal to the object's latest snapshot is not stored again.
    A monitor's first baseline of :data:`PACK_FROM_OBJECTS` objects or more is stored
    packed (store/baseline_packs.py): one row per object was most of a large tree's
    first tick. A later one (the state was lost, the monitor's shape changed) keeps
    rows, so every row stays newer than the packs.
    """
    shape = monitor.frontmatter.shape
    rendered = shape is not None and shape.render == "rendered"
    # A first baseline (no snapshot kept yet) has nothing to compare with: a tree of
    # 100,000 files would otherwise cost as many lookups.
    known = has_snapshots(conn, workspace, monitor.id)
    packs = baseline_packs.PackReader(conn, workspace, monitor.id) if known else None
    kept: list[tuple[str, str]] = []
    for observation in baselines:
        text = observation.snapshot_text
        if rendered:
            # Only a rendered shape changes the text a baseline keeps.
            try:
                text = shape_observation(observation, now_ms, shape, None).snapshot_text
            except Exception as error:  # the change's own shaping reports it, with its event
                log.debug("baseline of %s not kept: %s", monitor.id, error)
                continue
        if text is None:
            continue
        key = observation.object_key if observation.object_key is not None else monitor.id
        if known and latest_snapshot(conn, workspace, monitor.id, key, packs) == text:
            continue
        kept.append((key, text))
    if not known and len(kept) >= PACK_FROM_OBJECTS:
        baseline_packs.write(conn, workspace, monitor.id, kept, now_ms)
        return
    insert_snapshots(
        conn,
        workspace=workspace,
        monitor_id=monitor.id,
        event_id=BASELINE_EVENT_ID,
        contents=kept,
        now_ms=now_ms,
    )
