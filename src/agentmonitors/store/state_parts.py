"""A large source state stored in parts, one row each, so a change writes its parts only.

A file-fingerprint state over 100,000 files is ~21 MB of JSON; stored as one
``monitor_state.source_state`` value, each change rewrote all of it (a quarter to half
a second of SQLite work per changed file: docs/architecture.md, "Speed"). A state
value that offers ``state_parts()`` is instead stored as rows of
``monitor_state_parts`` (one per part, e.g. per folder), with :data:`PARTED` in
``source_state``; a change writes the parts it moved.

The contract, for any source: every part is a JSON object whose values are objects,
and the state is their merge (``{"a": {...}}`` and ``{"a": {...}}`` give one ``"a"``
holding both). ``state_parts()`` returns ``(parts, whole)``: with ``whole``, every
part's text by name (any other stored part goes); otherwise only the parts that differ
from the state the store holds (the source knows it from the state token), None for a
part to delete. A state stored in one
row, as earlier versions did, is read as it is and rewritten in parts by its next
change; a state written as one value again (by any writer) drops its parts (the
trigger in ``schema._version_6``), as does the deletion of its row.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Collection, Mapping
from contextlib import AbstractContextManager
from typing import Any

# ``source_state`` of a row whose state is in ``monitor_state_parts``.
PARTED = '{"$parts":1}'


class PartedState(dict[str, Any]):
    """A state read from its parts; ``parts`` names them. Their texts are not kept:
    beside the merged state they would be a third of a large state's peak memory,
    which a long-lived process keeps as its size."""

    def __init__(self, merged: Mapping[str, Any], parts: tuple[str, ...]) -> None:
        super().__init__(merged)
        self.parts = parts


def read(conn: sqlite3.Connection, state_id: str) -> PartedState:
    """The merged state of a parted row."""
    merged: dict[str, Any] = {}
    parts: list[str] = []
    for name, text in conn.execute(
        "SELECT part, body FROM monitor_state_parts WHERE state_id = ?", (state_id,)
    ):
        parts.append(name)
        try:
            value = json.loads(text)
        except ValueError:
            continue
        if not isinstance(value, dict):
            continue
        for key, members in value.items():
            if isinstance(members, dict):
                merged.setdefault(key, {}).update(members)
    return PartedState(merged, tuple(parts))


def read_named(
    conn: sqlite3.Connection, monitor_id: str, workspace: str | None, names: Collection[str]
) -> dict[str, str] | None:
    """The stored texts of the named parts of a monitor's state (absent names left
    out), or None when its state is not stored in parts: what a source that knows
    which parts moved reads instead of the whole state."""
    row = conn.execute(
        "SELECT id, source_state FROM monitor_state"
        " WHERE monitor_id = ? AND COALESCE(workspace_path, '') = COALESCE(?, '')",
        (monitor_id, workspace),
    ).fetchone()
    if row is None or row[1] != PARTED:
        return None
    wanted = list(dict.fromkeys(names))
    found: dict[str, str] = {}
    # Within SQLite's smallest limit on bound parameters.
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        marks = ",".join("?" * len(chunk))
        found.update(
            conn.execute(
                "SELECT part, body FROM monitor_state_parts"
                f" WHERE state_id = ? AND part IN ({marks})",
                (row[0], *chunk),
            ).fetchall()
        )
    return found


def reader(
    connect: Callable[[], AbstractContextManager[sqlite3.Connection]],
    monitor_id: str,
    workspace: str | None,
) -> Callable[[Collection[str]], dict[str, str] | None]:
    """:func:`read_named` for one monitor, each call on a connection from ``connect``
    (``ObservationContext.read_parts``)."""

    def read_parts(names: Collection[str]) -> dict[str, str] | None:
        with connect() as conn:
            return read_named(conn, monitor_id, workspace, names)

    return read_parts


def write(conn: sqlite3.Connection, state_id: str, value: Any) -> None:
    """Store ``value``'s parts for the row ``state_id``, whose ``source_state`` the
    caller sets to :data:`PARTED` in the same transaction."""
    parts, whole = value.state_parts()
    if whole:
        conn.execute("DELETE FROM monitor_state_parts WHERE state_id = ?", (state_id,))
    else:
        conn.executemany(
            "DELETE FROM monitor_state_parts WHERE state_id = ? AND part = ?",
            [(state_id, name) for name, text in parts.items() if text is None],
        )
    conn.executemany(
        "INSERT INTO monitor_state_parts (state_id, part, body) VALUES (?, ?, ?)"
        " ON CONFLICT (state_id, part) DO UPDATE SET body = excluded.body",
        [(state_id, name, text) for name, text in parts.items() if text is not None],
    )


def is_parted(value: Any) -> bool:
    """Whether ``value`` asks to be stored in parts."""
    return callable(getattr(value, "state_parts", None))
