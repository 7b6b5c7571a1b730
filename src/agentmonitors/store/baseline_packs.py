"""A monitor's first baseline, stored packed: many objects' texts in one row.

What a baseline saw of each object is kept so the object's first change is shown as a
diff against it (docs/architecture.md, "The life of one event", step 2). One
``monitor_snapshots`` row per object made a 100,000-file baseline write 100,000 rows
into a table with four indexes (70 MB, most of a second); here the texts, ordered by
object key, are cut into packs of about :data:`PACK_BYTES`, one row each, keyed by the
first key they hold (``monitor_baseline_packs``, schema version 7).

Packs are written only for a monitor that has no snapshot at all, so every
``monitor_snapshots`` row of the monitor is newer than its packs: an object's latest
snapshot is its newest row, or, when it has none, its text in the pack whose range
holds its key (:func:`agentmonitors.store.queries.latest_snapshot`).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable

from agentmonitors.fastpath.ulid import new_id
from agentmonitors.store.records import to_seconds

PACK_BYTES = 32 * 1024
"""About how many bytes of keys and texts one pack holds (one text may exceed it alone)."""

_MONITOR = "monitor_id = ? AND workspace_path IS ?"


def _encode(pack: dict[str, str]) -> str:
    return json.dumps(pack, ensure_ascii=False, separators=(",", ":"))


def write(
    conn: sqlite3.Connection,
    workspace: str | None,
    monitor_id: str,
    contents: Iterable[tuple[str, str]],
    now_ms: int,
) -> int:
    """Store ``(object_key, text)`` pairs in packs (a later pair of a key wins); how many
    packs were written. The caller has checked that the monitor has no snapshot."""
    texts = dict(contents)
    created = to_seconds(now_ms)
    rows: list[tuple[str, str | None, str, str, str, int]] = []
    pack: dict[str, str] = {}
    size = 0
    for key in sorted(texts):
        text = texts[key]
        pack[key] = text
        size += len(key) + len(text)
        if size >= PACK_BYTES:
            rows.append(
                (new_id(now_ms), workspace, monitor_id, next(iter(pack)), _encode(pack), created)
            )
            pack, size = {}, 0
    if pack:
        rows.append(
            (new_id(now_ms), workspace, monitor_id, next(iter(pack)), _encode(pack), created)
        )
    conn.executemany(
        "INSERT INTO monitor_baseline_packs (id, workspace_path, monitor_id, first_key, body,"
        " created_at) VALUES (?, ?, ?, ?, ?, ?)",
        rows,
    )
    return len(rows)


def exists(conn: sqlite3.Connection, workspace: str | None, monitor_id: str) -> bool:
    """Whether the monitor has a packed baseline in ``workspace``."""
    return (
        conn.execute(
            f"SELECT 1 FROM monitor_baseline_packs WHERE {_MONITOR} LIMIT 1",
            (monitor_id, workspace),
        ).fetchone()
        is not None
    )


class PackReader:
    """Texts of one monitor's packed baseline, by key; the last pack read is kept, so
    keys asked in order decode each pack once."""

    def __init__(self, conn: sqlite3.Connection, workspace: str | None, monitor_id: str) -> None:
        self._conn = conn
        self._workspace = workspace
        self._monitor_id = monitor_id
        self._pack_id: str | None = None
        self._texts: dict[str, str] = {}
        self._created_at = 0

    def text(self, key: str) -> tuple[str, int] | None:
        """The baseline's text of ``key`` and when (s) it was stored, or None."""
        row = self._conn.execute(
            f"SELECT id FROM monitor_baseline_packs WHERE {_MONITOR} AND first_key <= ?"
            " ORDER BY first_key DESC LIMIT 1",
            (self._monitor_id, self._workspace, key),
        ).fetchone()
        if row is None:
            return None
        if row[0] != self._pack_id:
            body, created = self._conn.execute(
                "SELECT body, created_at FROM monitor_baseline_packs WHERE id = ?", (row[0],)
            ).fetchone()
            self._pack_id, self._texts, self._created_at = row[0], json.loads(body), int(created)
        text = self._texts.get(key)
        return None if text is None else (text, self._created_at)


def keys(conn: sqlite3.Connection, workspace: str | None, monitor_id: str) -> list[tuple[str, int]]:
    """Every key the monitor's packed baseline holds, with when (s) it was stored."""
    found: list[tuple[str, int]] = []
    for body, created in conn.execute(
        f"SELECT body, created_at FROM monitor_baseline_packs WHERE {_MONITOR}",
        (monitor_id, workspace),
    ):
        found.extend((key, int(created)) for key in json.loads(body))
    return found


def _rewrite(conn: sqlite3.Connection, pack_id: str, texts: dict[str, str], gone: set[str]) -> int:
    """Store the pack without ``gone`` (drop it when nothing is left); how many went."""
    if not gone:
        return 0
    kept = {key: text for key, text in texts.items() if key not in gone}
    if kept:
        # The pack keeps its first key: lookups of keys in its range still land here.
        conn.execute(
            "UPDATE monitor_baseline_packs SET body = ? WHERE id = ?", (_encode(kept), pack_id)
        )
    else:
        conn.execute("DELETE FROM monitor_baseline_packs WHERE id = ?", (pack_id,))
    return len(texts) - len(kept)


def forget_superseded(conn: sqlite3.Connection, pack_id: str) -> int:
    """Drop from one pack the texts of objects that have a snapshot row (newer, so the
    pack's text is never read again); how many were dropped. A pack none of whose
    objects has a row costs two index probes, not a decode: retention looks at every
    old pack on each pass."""
    row = conn.execute(
        "SELECT workspace_path, monitor_id, first_key FROM monitor_baseline_packs WHERE id = ?",
        (pack_id,),
    ).fetchone()
    if row is None:
        return 0
    workspace, monitor_id, first_key = row
    (end,) = conn.execute(
        f"SELECT MIN(first_key) FROM monitor_baseline_packs WHERE {_MONITOR} AND first_key > ?",
        (monitor_id, workspace, first_key),
    ).fetchone()
    rows_in_range = (
        "SELECT DISTINCT object_key FROM monitor_snapshots WHERE monitor_id = ?"
        " AND object_key >= ?"
        + ("" if end is None else " AND object_key < ?")
        + " AND workspace_path IS ?"
    )
    params = (monitor_id, first_key, *(() if end is None else (end,)), workspace)
    changed = {str(found[0]) for found in conn.execute(rows_in_range, params)}
    if not changed:
        return 0
    body = conn.execute(
        "SELECT body FROM monitor_baseline_packs WHERE id = ?", (pack_id,)
    ).fetchone()[0]
    texts: dict[str, str] = json.loads(body)
    return _rewrite(conn, pack_id, texts, changed & texts.keys())


def forget_key(
    conn: sqlite3.Connection, workspace: str | None, monitor_id: str, object_key: str
) -> int:
    """Drop one object's text from the monitor's packed baseline, wherever it is."""
    row = conn.execute(
        f"SELECT id FROM monitor_baseline_packs WHERE {_MONITOR} AND first_key <= ?"
        " ORDER BY first_key DESC LIMIT 1",
        (monitor_id, workspace, object_key),
    ).fetchone()
    if row is None:
        return 0
    body = conn.execute(
        "SELECT body FROM monitor_baseline_packs WHERE id = ?", (row[0],)
    ).fetchone()[0]
    texts: dict[str, str] = json.loads(body)
    return _rewrite(conn, str(row[0]), texts, {object_key} & texts.keys())
