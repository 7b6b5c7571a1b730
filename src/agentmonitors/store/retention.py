"""Retention: what is done with leaves the database after an age, a few rows at a time.

What goes, once older than the age (docs/durability.md, "Retention"):

* **ended sessions** (``dormant`` since before the cutoff), with their projections,
  diff cursors and reaped watches;
* **events** no session still has to receive (every projection acknowledged, or none),
  with their projections and snapshots, except the newest event and the newest snapshot
  of each object: they are the base of the next diff and what silence is measured from;
* **observation history**, except each monitor's newest row and its first successful
  one (the baseline silence is measured from when it never changed);
* **reaped watches** of sessions still kept;
* **packed baseline texts** (store/baseline_packs.py) of objects that have a newer
  snapshot, as a baseline row would go, and every pack of a removed watch. Counted
  under ``monitor_baseline_packs`` in texts, not rows.

The compatible ``inbox_items`` table is left as it is: nothing here writes it, and its
states are the other tool's (docs/compatibility.md).

An unacknowledged event of a session that is still kept is never removed, however old.
Each :meth:`Pruner.step` is one short write transaction of at most ``batch`` rows, so a
hook waits at most one batch for the write lock; a pass walks each table in time order
from where the previous step stopped.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

from agentmonitors.store import baseline_packs
from agentmonitors.store.database import Database

BATCH_ROWS = 50
# Packs looked at per step: each holds a few hundred texts, each checked for a newer
# snapshot, so a step stays as short as one of 50 rows.
BATCH_PACKS = 2

DEFAULT_RETENTION_MS = 7 * 86_400_000
"""How long acknowledged events and ended sessions are kept (``retention:``)."""
RETENTION_OFF = frozenset(("off", "never", "forever"))
_RETENTION_UNITS = {"m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 7 * 86_400_000}


def retention_setting(value: str | None) -> int | None:
    """Milliseconds to keep what is done with (``retention:``): absent means 7 days,
    ``off`` (or ``never``, ``forever``) 0 for "keep everything", ``<n>m|h|d|w`` that long;
    None for anything else, which the caller reports (naming the file and the key) and
    treats as the default."""
    if value is None:
        return DEFAULT_RETENTION_MS
    word = value.strip().lower()
    if word in RETENTION_OFF:
        return 0
    number, unit = word[:-1], word[-1:]
    if unit in _RETENTION_UNITS and number.isdigit() and int(number) > 0:
        return int(number) * _RETENTION_UNITS[unit]
    return None


_Step = Callable[[sqlite3.Connection], int]


def _marks(values: Sequence[object]) -> str:
    return ", ".join("?" for _ in values)


class Pruner:
    """One pass over the store, removing what is older than ``cutoff_s``."""

    PHASES = ("sessions", "events", "snapshots", "packs", "history", "watches")

    def __init__(self, db: Database, cutoff_s: int, *, batch: int = BATCH_ROWS) -> None:
        self.db = db
        self.cutoff_s = cutoff_s
        self.batch = batch
        self.removed: dict[str, int] = {}
        self._phase = 0
        # Where the walk of a table in time order stopped: (created_at, id).
        self._after: tuple[int, str] = (-1, "")

    @property
    def done(self) -> bool:
        return self._phase >= len(self.PHASES)

    def _count(self, table: str, rows: int) -> int:
        if rows > 0:
            self.removed[table] = self.removed.get(table, 0) + rows
        return rows

    def step(self) -> bool:
        """One transaction's worth of pruning; True when the pass is over."""
        while not self.done:
            phase: _Step = getattr(self, "_" + self.PHASES[self._phase])
            with self.db.write() as conn:
                worked = phase(conn)
            if worked:
                return False
            self._phase += 1
            self._after = (-1, "")
        return True

    def run(self) -> dict[str, int]:
        """The whole pass at once (``daemon once``, tests); the daemon steps it."""
        while not self.step():
            pass
        return self.removed

    # ------------------------------------------------------------------ phases

    def _sessions(self, conn: sqlite3.Connection) -> int:
        row = conn.execute(
            "SELECT id FROM agent_sessions WHERE status = 'dormant'"
            " AND COALESCE(dormant_at, updated_at) < ? AND last_active_at < ?"
            " ORDER BY updated_at, id LIMIT 1",
            (self.cutoff_s, self.cutoff_s),
        ).fetchone()
        if row is None:
            return 0
        session_id = str(row[0])
        # Its projections, then its diff cursors (each holds a whole version of its
        # object), a batch per step; the rest in the next.
        for table in ("session_event_state", "session_object_cursor"):
            gone = self._count(
                table,
                conn.execute(
                    f"DELETE FROM {table} WHERE rowid IN (SELECT rowid FROM {table}"
                    " WHERE session_id = ? LIMIT ?)",
                    (session_id, self.batch),
                ).rowcount,
            )
            if gone:
                return gone
        watches = [
            str(found[0])
            for found in conn.execute(
                "SELECT id FROM ephemeral_monitors WHERE session_id = ?", (session_id,)
            )
        ]
        gone = self._drop_watches(conn, watches)
        return gone + self._count(
            "agent_sessions",
            conn.execute("DELETE FROM agent_sessions WHERE id = ?", (session_id,)).rowcount,
        )

    def _drop_watches(self, conn: sqlite3.Connection, watch_ids: Sequence[str]) -> int:
        """Watch rows and their monitor state (a big tree's state is most of a watch)."""
        if not watch_ids:
            return 0
        marks = _marks(watch_ids)
        conn.execute(f"DELETE FROM monitor_state WHERE monitor_id IN ({marks})", tuple(watch_ids))
        conn.execute(
            f"DELETE FROM monitor_baseline_packs WHERE monitor_id IN ({marks})", tuple(watch_ids)
        )
        return self._count(
            "ephemeral_monitors",
            conn.execute(
                f"DELETE FROM ephemeral_monitors WHERE id IN ({marks})", tuple(watch_ids)
            ).rowcount,
        )

    def _walk(
        self, conn: sqlite3.Connection, table: str, limit: int | None = None
    ) -> list[sqlite3.Row]:
        """The next batch of ``table``'s rows older than the cutoff, in time order."""
        rows: list[sqlite3.Row] = conn.execute(
            f"SELECT * FROM {table} WHERE created_at < ? AND (created_at, id) > (?, ?)"
            " ORDER BY created_at, id LIMIT ?",
            (self.cutoff_s, *self._after, self.batch if limit is None else limit),
        ).fetchall()
        if rows:
            self._after = (int(rows[-1]["created_at"]), str(rows[-1]["id"]))
        return rows

    def _events(self, conn: sqlite3.Connection) -> int:
        rows = self._walk(conn, "monitor_events")
        if not rows:
            return 0
        doomed = [
            str(row["id"])
            for row in rows
            if not conn.execute(
                "SELECT 1 FROM session_event_state WHERE event_id = ?"
                " AND acknowledged_at IS NULL LIMIT 1",
                (row["id"],),
            ).fetchone()
            and conn.execute(
                "SELECT 1 FROM monitor_events WHERE monitor_id = ? AND object_key IS ?"
                " AND workspace_path IS ? AND (created_at, id) > (?, ?) LIMIT 1",
                (
                    row["monitor_id"],
                    row["object_key"],
                    row["workspace_path"],
                    row["created_at"],
                    row["id"],
                ),
            ).fetchone()
        ]
        if doomed:
            marks = _marks(doomed)
            self._count(
                "session_event_state",
                conn.execute(
                    f"DELETE FROM session_event_state WHERE event_id IN ({marks})", doomed
                ).rowcount,
            )
            self._drop_snapshots(conn, f"event_id IN ({marks})", doomed)
            self._count(
                "monitor_events",
                conn.execute(f"DELETE FROM monitor_events WHERE id IN ({marks})", doomed).rowcount,
            )
        return len(rows)  # rows looked at: the walk goes on until none are left

    def _drop_snapshots(self, conn: sqlite3.Connection, where: str, params: Sequence[str]) -> int:
        """Snapshots matching ``where`` that are not the newest of their object."""
        return self._count(
            "monitor_snapshots",
            conn.execute(
                f"DELETE FROM monitor_snapshots AS s WHERE {where} AND EXISTS (SELECT 1 FROM"
                " monitor_snapshots n WHERE n.monitor_id = s.monitor_id"
                " AND n.object_key = s.object_key AND n.workspace_path IS s.workspace_path"
                " AND (n.created_at, n.id) > (s.created_at, s.id))",
                params,
            ).rowcount,
        )

    def _snapshots(self, conn: sqlite3.Connection) -> int:
        """Old snapshots whose event is gone (removed by an older agentmonitors or the
        other tool's own clean-up)."""
        rows = self._walk(conn, "monitor_snapshots")
        if rows:
            ids = [str(row["id"]) for row in rows]
            self._drop_snapshots(
                conn,
                f"s.id IN ({_marks(ids)}) AND NOT EXISTS (SELECT 1 FROM monitor_events e"
                " WHERE e.id = s.event_id)",
                ids,
            )
        return len(rows)

    def _packs(self, conn: sqlite3.Connection) -> int:
        """Old packed baseline texts of objects with a snapshot row (every row is newer
        than the packs): the row is what the next diff starts from."""
        rows = self._walk(conn, "monitor_baseline_packs", BATCH_PACKS)
        for row in rows:
            self._count(
                "monitor_baseline_packs", baseline_packs.forget_superseded(conn, str(row["id"]))
            )
        return len(rows)

    def _history(self, conn: sqlite3.Connection) -> int:
        rows = self._walk(conn, "observation_history")
        doomed = [
            str(row["id"])
            for row in rows
            # A newer row of the monitor exists: this one is not its newest...
            if conn.execute(
                "SELECT 1 FROM observation_history WHERE monitor_id = ? AND workspace_path IS ?"
                " AND (created_at, id) > (?, ?) LIMIT 1",
                (row["monitor_id"], row["workspace_path"], row["created_at"], row["id"]),
            ).fetchone()
            # ...and it is not the monitor's first success, its baseline.
            and (
                row["result"] == "errored"
                or conn.execute(
                    "SELECT 1 FROM observation_history WHERE monitor_id = ?"
                    " AND workspace_path IS ? AND result != 'errored'"
                    " AND (created_at, id) < (?, ?) LIMIT 1",
                    (row["monitor_id"], row["workspace_path"], row["created_at"], row["id"]),
                ).fetchone()
            )
        ]
        if doomed:
            self._count(
                "observation_history",
                conn.execute(
                    f"DELETE FROM observation_history WHERE id IN ({_marks(doomed)})", doomed
                ).rowcount,
            )
        return len(rows)

    def _watches(self, conn: sqlite3.Connection) -> int:
        watch_ids = [
            str(row[0])
            for row in conn.execute(
                "SELECT id FROM ephemeral_monitors WHERE status = 'reaped' AND reaped_at < ?"
                " LIMIT ?",
                (self.cutoff_s, self.batch),
            )
        ]
        return self._drop_watches(conn, watch_ids)


def oldest_kept(db: Database) -> int | None:
    """When (s) the oldest event still stored was made; None when there is none."""
    with db.read() as conn:
        row = conn.execute(
            "SELECT created_at FROM monitor_events ORDER BY created_at, id LIMIT 1"
        ).fetchone()
    return None if row is None else int(row[0])
