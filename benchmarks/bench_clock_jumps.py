"""A running daemon whose wall clock jumps a day either way, or that sleeps through fires.

Run: .venv/bin/python benchmarks/bench_clock_jumps.py [rounds]
The real daemon (its own process, socket and database) runs with a clock that is the
real one plus an offset this script rewrites (``tests/daemon/clocked_daemon.py
--offset``, the daemon ticking on its own at least once a second). Two monitors: a
command whose output the script changes (``urgency: high``, so each change settles for
15 s) and an hourly cron. Each round:

- a change is made and starts settling, then the clock is set back a day: the time from
  the jump to the stored event (goal: the event is out within its 15 s window of the
  change, never a day later);
- the clock is set forward two days: the hourly cron's runs over the next 3 s (goal: at
  most one catch-up run, not 24);
- SIGSTOP, the clock moved on 45 minutes across a fire (a laptop asleep), SIGCONT: the time to the
  daemon's next tick, and the cron's runs over the next 3 s (goal: one catch-up run).
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _daemon import BenchDaemon

REPO = Path(__file__).resolve().parents[1]
LAUNCHER = REPO / "tests" / "daemon" / "clocked_daemon.py"
DAY_MS = 86_400_000
SETTLE_MS = 15_000
WAIT_S = 30.0


class OffsetDaemon:
    def __init__(self) -> None:
        self.bench = BenchDaemon(
            {
                "build": "watch:\n  type: command-poll\n  command: [cat, status.txt]\n"
                "  interval: 1s\nurgency: high\n",
                "hourly": "watch:\n  type: schedule\n  cron: '0 * * * *'\n",
            }
        )
        self.root = self.bench.root
        (self.root / "status.txt").write_text("0\n")
        self.bench.cli("monitor", "approve", "--yes", "--all")
        self.clock_file = self.bench.base / "offset"
        # 10:22 UTC today: between two hourly fires.
        now = time.time_ns() // 1_000_000
        self.offset = now - now % DAY_MS + 10 * 3_600_000 + 22 * 60_000 - now
        self.write_offset()
        self.process = subprocess.Popen(
            [sys.executable, str(LAUNCHER), "--offset", str(self.clock_file), str(self.root)],
            cwd=self.root,
            env={**self.bench.env, "PYTHONPATH": str(REPO)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait(lambda: self.count("observation_history", "build"), 20)

    def write_offset(self) -> None:
        scratch = self.clock_file.with_suffix(".next")
        scratch.write_text(str(self.offset))
        os.replace(scratch, self.clock_file)

    def jump(self, ms: int) -> None:
        self.offset += ms
        self.write_offset()

    def query(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        if not os.path.exists(self.bench.db):
            return []  # connecting would create it under the daemon
        conn = sqlite3.connect(self.bench.db)
        try:
            return conn.execute(sql, params).fetchall()
        except sqlite3.OperationalError:
            return []
        finally:
            conn.close()

    def count(self, table: str, monitor_id: str) -> int:
        rows = self.query(f"SELECT COUNT(*) FROM {table} WHERE monitor_id = ?", monitor_id)
        return int(rows[0][0]) if rows else 0

    def held(self) -> bool:
        rows = self.query("SELECT notify_state FROM monitor_state WHERE monitor_id = 'build'")
        return bool(rows) and "pendingDebounce" in json.loads(rows[0][0])

    def close(self) -> None:
        self.process.send_signal(signal.SIGCONT)
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(10)
        self.bench.close()


def wait(predicate: Any, timeout_s: float) -> float:
    """Seconds until ``predicate`` holds; ``inf`` when it never did within ``timeout_s``."""
    start = time.monotonic()
    while time.monotonic() - start < timeout_s:
        if predicate():
            return time.monotonic() - start
        time.sleep(0.005)
    return float("inf")


def shown(ms: float) -> str:
    return f"{ms:.0f} ms" if ms != float("inf") else f"none within {WAIT_S:.0f} s"


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    daemon = OffsetDaemon()
    release_ms: list[float] = []
    change_to_event_ms: list[float] = []
    forward_runs: list[int] = []
    resume_ms: list[float] = []
    sleep_runs: list[int] = []
    try:
        for index in range(rounds):
            events = daemon.count("monitor_events", "build")
            changed = time.monotonic()
            (daemon.root / "status.txt").write_text(f"{index + 1}\n")
            wait(daemon.held, 10)
            daemon.jump(-DAY_MS)
            jumped = time.monotonic()
            waited = wait(lambda e=events: daemon.count("monitor_events", "build") > e, WAIT_S)
            release_ms.append(waited * 1000)
            change_to_event_ms.append((jumped - changed) * 1000 + waited * 1000)

            fired = daemon.count("monitor_events", "hourly")
            daemon.jump(2 * DAY_MS)
            time.sleep(3)
            forward_runs.append(daemon.count("monitor_events", "hourly") - fired)

            fired = daemon.count("monitor_events", "hourly")
            ticks = daemon.count("observation_history", "build")
            daemon.process.send_signal(signal.SIGSTOP)
            daemon.jump(45 * 60_000)
            time.sleep(0.5)
            daemon.process.send_signal(signal.SIGCONT)
            resume_ms.append(
                wait(lambda t=ticks: daemon.count("observation_history", "build") > t, WAIT_S)
                * 1000
            )
            time.sleep(3)
            sleep_runs.append(daemon.count("monitor_events", "hourly") - fired)
            # Back near 10:22 of some day for the next round: the next jump is a day.
            daemon.jump(-DAY_MS - 45 * 60_000)
    finally:
        daemon.close()

    print(f"rounds: {rounds}")
    print(
        f"set back a day while a high change settles: jump -> event median"
        f" {shown(statistics.median(release_ms))}, max {shown(max(release_ms))};"
        f" change -> event max {shown(max(change_to_event_ms))}"
        f" (goal: <= {SETTLE_MS} ms after the change, never a day)"
    )
    print(
        f"set forward two days: hourly cron runs per jump {forward_runs}"
        " (goal: at most 1 each, not 48)"
    )
    print(
        f"SIGSTOP, clock +45 min, SIGCONT: first tick after SIGCONT median"
        f" {shown(statistics.median(resume_ms))}, max {shown(max(resume_ms))}"
        " (this launcher ticks at least once a second);"
        f" hourly cron runs {sleep_runs} (goal: 1 catch-up each when a fire was slept"
        " through)"
    )


if __name__ == "__main__":
    main()
