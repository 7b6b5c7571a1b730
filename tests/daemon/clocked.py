"""A real daemon process whose clock the test sets (see ``clocked_daemon.py``)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from agentmonitors.daemon.client import call, ping
from agentmonitors.paths import resolve_db_path, resolve_socket_path
from tests.waiting import wait_for

LAUNCHER = Path(__file__).with_name("clocked_daemon.py")
REPO_ROOT = Path(__file__).resolve().parents[2]
START_MS = 1_796_120_400_000  # 2026-12-01T10:20:00Z


def ms(iso: str) -> int:
    return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


class ClockedDaemon:
    """A daemon process over ``root`` whose clock is whatever the test last set."""

    def __init__(self, root: Path, clock_file: Path, *, offset: bool = False) -> None:
        # ``offset``: the clock runs in real time from the instant set (clocked_daemon.py).
        self.offset = offset
        self.written = 0
        self.root = root
        self.clock_file = clock_file
        self.socket = resolve_socket_path(str(root))
        self.db = resolve_db_path(str(root))
        self.process: subprocess.Popen[str] | None = None
        self.now_ms = START_MS
        self.seen = 0  # the rowid of the last event new_events() returned
        self.set_time(START_MS)

    def set_time(self, now_ms: int) -> None:
        self.now_ms = now_ms
        self._write(now_ms - time.time_ns() // 1_000_000 if self.offset else now_ms)

    def advance(self, seconds: float) -> None:
        """Move the clock on (a running clock jumps by that much)."""
        self.now_ms += int(seconds * 1000)
        self._write(self.written + int(seconds * 1000))

    def _write(self, value: int) -> None:
        self.written = value
        # Replace, never truncate: the daemon may read between the two.
        scratch = self.clock_file.with_suffix(".next")
        scratch.write_text(str(value))
        os.replace(scratch, self.clock_file)

    def start(self, env: dict[str, str] | None = None) -> None:
        environment = {**os.environ, **(env or {})}
        environment["PYTHONPATH"] = os.pathsep.join(
            [str(REPO_ROOT), *filter(None, [environment.get("PYTHONPATH")])]
        )
        self.process = subprocess.Popen(
            [
                sys.executable,
                str(LAUNCHER),
                *(["--offset"] if self.offset else []),
                str(self.clock_file),
                str(self.root),
            ],
            cwd=self.root,
            env=environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        wait_for(lambda: ping(self.socket))
        # The daemon's own first tick (the reconcile) runs as soon as it listens;
        # wait for it so every later tick is one this test asked for.
        wait_for(lambda: self.query("SELECT 1 FROM observation_history LIMIT 1"))

    def tick(self) -> dict[str, Any]:
        result = call(self.socket, "daemon.tick", {}, timeout_s=60)
        assert isinstance(result, dict)
        return result

    def stop(self) -> str:
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        out, _ = self.process.communicate(timeout=20)
        self.process = None
        return out

    def query(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        if not os.path.exists(self.db):
            return []
        conn = sqlite3.connect(self.db)
        try:
            return conn.execute(sql, params).fetchall()
        except sqlite3.OperationalError:
            return []
        finally:
            conn.close()

    def new_events(self) -> list[tuple[str, str, str | None]]:
        """(monitor, title, object key) of the events stored since the last call.

        Followed by rowid, not by position: pruning (a clock set forward past the
        retention age) removes older rows, and the newest row always stays.
        """
        rows = self.query(
            "SELECT rowid, monitor_id, title, object_key FROM monitor_events"
            " WHERE rowid > ? ORDER BY rowid",
            self.seen,
        )
        if rows:
            self.seen = rows[-1][0]
        return [(row[1], row[2], row[3]) for row in rows]

    def results(self, monitor_id: str) -> list[str]:
        rows = self.query(
            "SELECT result FROM observation_history WHERE monitor_id = ? ORDER BY id", monitor_id
        )
        return [row[0] for row in rows]
