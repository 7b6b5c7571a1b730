"""What a baseline saw of each object, kept as that object's first snapshot.

A first observation emits no event, yet the first change after it must be shown as a
diff (docs/architecture.md, "Life of an event", step 2). Kept apart from
`runtime/materialize.py` so a plain baseline tick loads nothing an event needs.
"""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Iterable

from agentmonitors.fastpath.lazy_logging import get_logger
from agentmonitors.monitor.policy import MonitorDefinition
from agentmonitors.runtime.shape import shape_observation
from agentmonitors.sources.observation import BaselineTexts, Observation
from agentmonitors.store import baseline_packs
from agentmonitors.store.queries import has_snapshots, insert_snapshots, latest_snapshot

log = get_logger("agentmonitors.runtime.baselines")

BASELINE_EVENT_ID = ""
"""The ``event_id`` of a snapshot kept from a baseline: no event carried it."""

PACK_FROM_OBJECTS = 100
"""A first baseline of this many objects or more is stored packed; a smaller one, a row
per object as every later snapshot is (each has its own id and time for the agent's
``snapshot``/``diff`` verbs, and a few rows cost nothing)."""


def _shaped(
    monitor: MonitorDefinition,
    baselines: list[Observation],
    texts: BaselineTexts | None,
    now_ms: int,
) -> list[tuple[str, str]]:
    """Each ``(object key, text)`` the baseline keeps, shaped as a change will be."""
    shape = monitor.frontmatter.shape
    rendered = shape is not None and shape.render == "rendered"
    kept: list[tuple[str, str]] = []
    if texts is not None and not rendered:
        # Only a rendered shape changes the text a baseline keeps.
        kept.extend(texts.texts.items())
        texts = None
    observations: Iterable[Observation] = baselines
    if texts is not None:
        observations = itertools.chain(baselines, map(texts.observation, texts.texts))
    for observation in observations:
        text = observation.snapshot_text
        if rendered:
            try:
                text = shape_observation(observation, now_ms, shape, None).snapshot_text
            except Exception as error:  # the change's own shaping reports it, with its event
                log.debug("baseline of %s not kept: %s", monitor.id, error)
                continue
        if text is not None:
            key = observation.object_key if observation.object_key is not None else monitor.id
            kept.append((key, text))
    return kept


def keep_baselines(
    conn: sqlite3.Connection,
    monitor: MonitorDefinition,
    baselines: list[Observation],
    workspace: str | None,
    now_ms: int,
    texts: BaselineTexts | None = None,
) -> None:
    """Keep what a baseline saw of each object (``baselines``, and ``texts`` of a
    source with many objects) as its snapshot, inside the caller's transaction, so the
    object's first change is diffed against it.

    Shaped as that change will be (a ``rendered`` shape diffs its artifact, not the
    source's text); a text equal to the object's latest snapshot is not stored again.
    A monitor's first baseline of :data:`PACK_FROM_OBJECTS` objects or more is stored
    packed (store/baseline_packs.py): one row per object was most of a large tree's
    first tick. A later one (the state was lost, the monitor's shape changed) keeps
    rows, so every row stays newer than the packs.
    """
    # A first baseline (no snapshot kept yet) has nothing to compare with: a tree of
    # 100,000 files would otherwise cost as many lookups.
    known = has_snapshots(conn, workspace, monitor.id)
    kept = _shaped(monitor, baselines, texts, now_ms)
    if known:
        packs = baseline_packs.PackReader(conn, workspace, monitor.id)
        kept = [
            (key, text)
            for key, text in kept
            if latest_snapshot(conn, workspace, monitor.id, key, packs) != text
        ]
    elif len(kept) >= PACK_FROM_OBJECTS:
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
