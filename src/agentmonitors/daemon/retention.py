"""The daemon's retention passes: the store pruned in small steps between requests.

A pass starts after a tick once the last one is an hour old (on the daemon's clock, so
the first tick of a daemon prunes what accumulated while none ran). It reads
``retention:`` from the enable file each time, then runs :class:`store.retention.Pruner`
one short transaction per turn of the event loop, so a request that arrives meanwhile
waits for one batch at most (docs/durability.md, "Retention"). No timer of its own
wakes an idle daemon: the ticks it rides on are due anyway.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from agentmonitors.clock import Clock, iso_from_ms
from agentmonitors.delivery.stale_records import prune_stale_records
from agentmonitors.store.database import Database, StoreError
from agentmonitors.store.retention import DEFAULT_RETENTION_MS, Pruner, retention_setting
from agentmonitors.workspace import enable_file_path, read_local_state

log = logging.getLogger("agentmonitors.daemon")

PASS_EVERY_MS = 3_600_000
# Between two steps the loop serves whatever is waiting.
STEP_GAP_S = 0.01


class RetentionRunner:
    def __init__(
        self, db: Database, workspace: str, clock: Clock, out: Callable[[str], None]
    ) -> None:
        self.db = db
        self.workspace = workspace
        self.clock = clock
        self.out = out
        self.next_pass_ms = 0
        self.keep_ms = DEFAULT_RETENTION_MS
        self.problem: str | None = None
        self.last_pass: dict[str, Any] | None = None
        self._pruner: Pruner | None = None
        self._started = 0.0
        self._handle: asyncio.TimerHandle | asyncio.Handle | None = None

    def _read_setting(self) -> None:
        written = read_local_state(self.workspace).retention
        keep = retention_setting(written)
        if keep is None:
            self.problem = (
                f"retention: {written!r} in {enable_file_path(self.workspace)} is not"
                " understood (expected off or <number>m|h|d|w, e.g. 7d); keeping 7 days"
            )
            keep = DEFAULT_RETENTION_MS
        else:
            self.problem = None
        self.keep_ms = keep

    def after_tick(self, *_: object) -> None:
        """Start a pass when one is due (a runtime ``after_tick`` callback)."""
        now = self.clock.now_ms()
        if self._pruner is not None or now < self.next_pass_ms:
            return
        self.next_pass_ms = now + PASS_EVERY_MS
        self._read_setting()
        if self.keep_ms <= 0:  # retention: off
            self.last_pass = {"at": iso_from_ms(now), "removed": {}, "tookMs": 0}
            return
        self._pruner = Pruner(self.db, (now - self.keep_ms) // 1000)
        self._started = time.monotonic()
        self._handle = asyncio.get_running_loop().call_soon(self._step)

    def _step(self) -> None:
        pruner = self._pruner
        if pruner is None:
            return
        try:
            done = pruner.step()
        except StoreError as error:
            # A full disk or a busy store: the next pass tries again.
            log.warning("pruning the database failed: %s", error)
            done = True
        if not done:
            self._handle = asyncio.get_running_loop().call_later(STEP_GAP_S, self._step)
            return
        self._pruner = self._handle = None
        records = self._prune_records(pruner.cutoff_s)
        self.last_pass = {
            "at": iso_from_ms(self.clock.now_ms()),
            "removed": dict(pruner.removed),
            "recordsRemoved": records,
            "tookMs": round((time.monotonic() - self._started) * 1000),
        }
        if pruner.removed:
            counts = ", ".join(f"{rows} {table}" for table, rows in sorted(pruner.removed.items()))
            self.out(f"AgentMon pruned rows older than the retention age: {counts}.")
        if records:
            counts = ", ".join(f"{files} {kind}" for kind, files in sorted(records.items()))
            self.out(f"AgentMon removed stale session records from the data folder: {counts}.")

    def _prune_records(self, cutoff_s: int) -> dict[str, int]:
        """The per-process and per-thread records the sessions left in the user's data
        folder, once stale (delivery/stale_records.py); the sessions kept date theirs."""
        try:
            with self.db.read() as conn:
                kept = {
                    str(thread): float(active)
                    for thread, active in conn.execute(
                        "SELECT host_session_id, MAX(last_active_at) FROM agent_sessions"
                        " GROUP BY host_session_id"
                    )
                }
        except StoreError as error:
            log.warning("reading the sessions kept failed: %s", error)
            return {}
        return prune_stale_records(cutoff_s, kept)

    def close(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
        self._pruner = self._handle = None

    def status(self) -> dict[str, Any]:
        return {
            "keepMs": self.keep_ms,
            "problem": self.problem,
            "lastPass": self.last_pass,
            "running": self._pruner is not None,
        }
