"""The database's size under weeks of churn, with retention pruning it.

Run: .venv/bin/python benchmarks/bench_retention.py [--days 21] [--every-s 60]
     [--keep-days 7] [--files 50]   (CI: --days 3 --keep-days 1 --every-s 600 --files 2)

On a real database file, through the real write paths (``materialize`` with its
projection, ``add_history``, the delivery service's open, acknowledge and close), with
a manual clock: 20 monitors of 50 files each, one change every ``--every-s`` simulated
seconds (a 2 KiB snapshot each), three sessions that acknowledge everything every ten
minutes, and one session ending and another opening each day. Every simulated hour a
retention pass runs as the daemon runs it (``store.retention.Pruner``, one small
transaction per step). Printed each day: the file and write-ahead log sizes and the rows
kept; at the end, the longest step (how long a hook could wait for the write lock).

Goals: after the retention age the size stays flat (the last day within 10 % of the
day after the age); a step holds the write lock under 50 ms (p99). The longest step is
printed too: a commit that takes the write-ahead log past 1,000 pages runs SQLite's
checkpoint, whichever write it is (with checkpoints off the longest step stays under
50 ms).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

from agentmonitors.clock import ManualClock
from agentmonitors.delivery.projection import project_event
from agentmonitors.delivery.service import DeliveryService
from agentmonitors.monitor.model import UrgencyBand
from agentmonitors.runtime.materialize import materialize
from agentmonitors.runtime.notify import CapturedMonitor, envelope_for
from agentmonitors.sources.observation import Observation
from agentmonitors.store import queries
from agentmonitors.store.database import Database
from agentmonitors.store.retention import Pruner

START_MS = 1_780_000_000_000
DAY_MS = 86_400_000
HOUR_MS = 3_600_000
ACK_EVERY_MS = 600_000
MONITORS = 20
FILES = 50
SNAPSHOT = "line of a watched file, long enough to look like code\n" * 40


def _monitor(index: int) -> CapturedMonitor:
    name = f"m{index:02d}"
    return CapturedMonitor(
        id=name,
        display_name=name,
        file_path=f"/ws/.claude/monitors/{name}/MONITOR.md",
        instructions="Look at it.",
        source_name="file-fingerprint",
        name=None,
        band=UrgencyBand("normal", "normal"),
        baseline_strategy="incremental",
        tags=(),
    )


def _sizes(path: str) -> tuple[int, int]:
    wal = path + "-wal"
    return os.path.getsize(path), os.path.getsize(wal) if os.path.exists(wal) else 0


def _rows(db: Database) -> dict[str, int]:
    tables = ("monitor_events", "monitor_snapshots", "session_event_state", "observation_history")
    return {table: queries.count_rows(db, table) for table in tables}


class Churn:
    """The simulated project: its changes, sessions, acknowledgements and passes."""

    def __init__(
        self, db: Database, clock: ManualClock, every_s: int, keep_days: int, files: int
    ) -> None:
        self.db, self.clock, self.files = db, clock, files
        self.every_ms, self.keep_ms = every_s * 1000, keep_days * DAY_MS
        self.monitors = [_monitor(index) for index in range(MONITORS)]
        self.service = DeliveryService(db, clock)
        self.opened = 0
        self.sessions = [self._open() for _ in range(3)]
        self.changes = 0
        self.next_ack, self.next_pass = START_MS + ACK_EVERY_MS, START_MS + HOUR_MS
        self.steps: list[float] = []

    def _open(self) -> str:
        self.opened += 1
        return str(self.service.open_session(f"s{self.opened}", workspace_path="/ws")["id"])

    def change(self) -> None:
        self.clock.advance(self.every_ms)
        now = self.clock.now_ms()
        monitor = self.monitors[self.changes % MONITORS]
        observation = Observation(
            title=f"change {self.changes}",
            snapshot_text=f"{self.changes}\n{SNAPSHOT}",
            object_key=f"src/file-{(self.changes // MONITORS) % self.files}.py",
        )
        with self.db.write() as conn:
            envelope = envelope_for(monitor, observation, now)
            materialize(conn, envelope, "/ws", now, project_event)
            queries.add_history(
                conn,
                monitor_id=monitor.id,
                workspace="/ws",
                source_name="file-fingerprint",
                result="changed",
                data={"changed": 1},
                now_ms=now,
            )
        self.changes += 1
        if now >= self.next_ack:
            self.next_ack += ACK_EVERY_MS
            for session in self.sessions:
                self.service.ack_counted(session)
        if now >= self.next_pass:
            self.next_pass += HOUR_MS
            self.prune(now)

    def prune(self, now: int) -> None:
        pruner = Pruner(self.db, (now - self.keep_ms) // 1000)
        while True:
            begin = time.perf_counter()
            done = pruner.step()
            self.steps.append((time.perf_counter() - begin) * 1000)
            if done:
                return

    def new_day(self) -> None:
        """A session ends and another opens."""
        self.service.close_session(self.sessions.pop(0))
        self.sessions.append(self._open())


def _verdicts(sizes: list[int], steps: list[float], days: int, keep_days: int) -> bool:
    ok = True
    if days > keep_days + 1:
        settled = sizes[keep_days]  # the day after the age
        growth = (sizes[-1] - settled) / settled * 100
        good = growth < 10
        ok &= good
        print(
            f"size after the age: day {keep_days + 1} {settled / 2**20:.1f} MiB,"
            f" day {days} {sizes[-1] / 2**20:.1f} MiB ({growth:+.1f} %;"
            f" goal < +10 %) {'ok' if good else 'MISSED'}"
        )
    longest = max(steps) if steps else 0.0
    p99 = statistics.quantiles(steps, n=100)[98] if len(steps) >= 100 else longest
    good = p99 < 50
    print(
        f"prune steps: {len(steps)}, p99 {p99:.1f} ms (goal < 50 ms) {'ok' if good else 'MISSED'};"
        f" longest {longest:.1f} ms, {sum(step >= 50 for step in steps)} of 50 ms or more"
        " (a commit that takes the log past 1,000 pages also runs SQLite's checkpoint, as"
        " any write's would)"
    )
    return ok and good


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--days", type=int, default=21)
    parser.add_argument("--every-s", type=int, default=60)
    parser.add_argument("--keep-days", type=int, default=7)
    parser.add_argument("--files", type=int, default=FILES, help="files per monitor")
    args = parser.parse_args()
    base = tempfile.mkdtemp(prefix="am-retention-bench-")
    path = os.path.join(base, "inbox.db")
    sizes: list[int] = []
    try:
        with Database(path) as db:
            churn = Churn(db, ManualClock(START_MS), args.every_s, args.keep_days, args.files)
            print(
                f"{'day':>4} {'file MiB':>9} {'wal MiB':>8} {'events':>7} {'snapshots':>9}"
                f" {'projections':>11} {'history':>8}"
            )
            for day in range(1, args.days + 1):
                while churn.clock.now_ms() < START_MS + day * DAY_MS:
                    churn.change()
                churn.new_day()
                size, wal = _sizes(path)
                sizes.append(size + wal)
                rows = _rows(db)
                print(
                    f"{day:>4} {size / 2**20:>9.1f} {wal / 2**20:>8.1f}"
                    f" {rows['monitor_events']:>7} {rows['monitor_snapshots']:>9}"
                    f" {rows['session_event_state']:>11} {rows['observation_history']:>8}"
                )
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f"\n{churn.changes} changes over {args.days} simulated days, keep {args.keep_days} d")
    return 0 if _verdicts(sizes, churn.steps, args.days, args.keep_days) else 1


if __name__ == "__main__":
    sys.exit(main())
