"""Claim-time ``net`` consolidation: a catch-up span of one object delivers only its endpoint.

Events of a ``net`` monitor that carry a snapshot and an object key are grouped by
``(monitor, object key, workspace)``; only the newest of each group (by
``created_at``, then id) is delivered, the older ones are marked
``net_suppressed_at``, and the survivor's per-recipient diff is re-anchored to the
recipient's cursor so it spans the whole catch-up. Every other event is its own group.

A group that starts with the object's creation, which this recipient was never shown
(a file created, then edited before it settled), is presented as that creation: the
creation's title and summary, and the survivor's whole content as added lines. A diff
against the version as created would be against a version the agent never saw.

Folded rows follow their survivor: acknowledging it acknowledges them (see
``states.acknowledge``), so none is left claimed-but-unread behind it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from agentmonitors.delivery import states
from agentmonitors.delivery.records import DeliveryRow
from agentmonitors.diff import build_diff
from agentmonitors.fastpath.lean_dataclass import dataclass, field, replace

GroupKey = tuple[str, ...]
# ``changeKind`` values that mean the object did not exist before the event.
CREATION_KINDS = frozenset({"created", "added"})


@dataclass(frozen=True)
class CollapseView:
    delivered: list[DeliveryRow]  # in input order (callers pass oldest first)
    suppressed: list[DeliveryRow]
    # Survivors of groups that really collapsed (more than one event).
    multi_survivors: list[DeliveryRow]
    # Survivors presented as the unseen creation their group started with (by id).
    as_created: frozenset[str] = frozenset()
    # Every row of each ``net`` group, in input order.
    members: dict[GroupKey, list[DeliveryRow]] = field(default_factory=dict)

    def rows_of(self, shown: Sequence[DeliveryRow]) -> list[DeliveryRow]:
        """The input rows of the groups these delivered rows stand for, group by group."""
        rows: list[DeliveryRow] = []
        for row in shown:
            if row.group is None:
                rows.append(row)
            else:
                rows += self.members[row.group]
        return rows


def is_unseen_creation(row: DeliveryRow) -> bool:
    """The object's first version, never surfaced to this recipient."""
    scope = row.event.query_scope
    return row.pending and isinstance(scope, dict) and scope.get("changeKind") in CREATION_KINDS


def presented_as_created(survivor: DeliveryRow, creation: DeliveryRow) -> DeliveryRow:
    """The survivor under its creation's title and summary (same id, same content)."""
    event = replace(survivor.event, title=creation.event.title, summary=creation.event.summary)
    return replace(survivor, event=event, digest=creation.digest)


def _place(row: DeliveryRow) -> tuple[int, str]:
    return row.event.created_at, row.id


def collapse_view(rows: Sequence[DeliveryRow]) -> CollapseView:
    """Which rows survive and which fold away; reads and writes nothing.

    A group's survivor is its newest row (by ``created_at``, then id) and its creation
    the oldest, wherever they stand in ``rows``.
    """
    newest: dict[GroupKey, DeliveryRow] = {}
    oldest: dict[GroupKey, DeliveryRow] = {}
    members: dict[GroupKey, list[DeliveryRow]] = {}
    for row in rows:
        key = row.group
        if key is None:
            continue
        if key not in members:
            newest[key] = oldest[key] = row
            members[key] = [row]
            continue
        members[key].append(row)
        if _place(row) > _place(newest[key]):
            newest[key] = row
        elif _place(row) < _place(oldest[key]):
            oldest[key] = row
    if not members:
        return CollapseView(list(rows), [], [])
    delivered: list[DeliveryRow] = []
    suppressed: list[DeliveryRow] = []
    multi: list[DeliveryRow] = []
    as_created: set[str] = set()
    for row in rows:
        key = row.group
        if key is None:
            delivered.append(row)
            continue
        if newest[key].id != row.id:
            suppressed.append(row)
            continue
        shown = row
        if len(members[key]) > 1:
            if is_unseen_creation(oldest[key]):
                shown = presented_as_created(row, oldest[key])
                as_created.add(row.id)
            multi.append(shown)
        delivered.append(shown)
    return CollapseView(delivered, suppressed, multi, frozenset(as_created), members)


def creation_diff(content: str) -> str:
    """Every line of ``content`` as added, in the diff's own line format."""
    if content.endswith("\n"):
        content = content[:-1]
    return "\n".join(f"+ {number}: {line}" for number, line in enumerate(content.split("\n"), 1))


def _strategy(row: DeliveryRow) -> str | None:
    metadata = row.event.snapshot_metadata
    if isinstance(metadata, dict) and isinstance(metadata.get("strategy"), str):
        return str(metadata["strategy"])
    return None


def rediff(conn: sqlite3.Connection, session_id: str, survivor: DeliveryRow) -> str | None:
    """The survivor's delta from this recipient's cursor; None without a cursor."""
    baseline = states.cursor_content(conn, session_id, survivor)
    artifact = survivor.event.snapshot_text
    if baseline is None or artifact is None:
        return None
    return build_diff(baseline, artifact, _strategy(survivor))


def rediffs(conn: sqlite3.Connection, session_id: str, view: CollapseView) -> dict[str, str]:
    """Re-anchored deltas of the collapsed survivors, by event id (read-only)."""
    found: dict[str, str] = {}
    for row in view.multi_survivors:
        if row.id in view.as_created and row.event.snapshot_text is not None:
            found[row.id] = creation_diff(row.event.snapshot_text)
            continue
        diff = rediff(conn, session_id, row)
        # Without a cursor the session saw no version of the object: a diff from the
        # survivor's own predecessor would be against one it was never shown.
        found[row.id] = "" if diff is None else diff
    return found


def apply_collapse(
    conn: sqlite3.Connection, session_id: str, candidates: Sequence[DeliveryRow], now_ms: int
) -> CollapseView:
    """Persist the collapse over a claim's candidates (before they are marked claimed)."""
    view = collapse_view(candidates)
    for event_id, diff in rediffs(conn, session_id, view).items():
        states.set_recipient_diff(conn, session_id, event_id, diff, now_ms)
    if view.suppressed:
        states.mark_net_suppressed(conn, session_id, [row.id for row in view.suppressed], now_ms)
    return view
