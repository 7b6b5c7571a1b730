"""Shared set-up for the daemon benchmarks: a throwaway home, workspace and daemon process."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


class BenchDaemon:
    def __init__(self, monitors: dict[str, str]) -> None:
        self.base = Path(tempfile.mkdtemp(prefix="am-bench-"))
        self.home = self.base / "home"
        self.root = self.base / "ws"
        (self.root / ".claude" / "monitors").mkdir(parents=True)
        self.home.mkdir()
        self.env = {
            **os.environ,
            "HOME": str(self.home),
            "XDG_DATA_HOME": str(self.home / ".local" / "share"),
        }
        for name in ("AGENTMONITORS_DB", "AGENTMONITORS_SOCKET", "CLAUDE_PROJECT_DIR"):
            self.env.pop(name, None)
        for monitor_id, frontmatter in monitors.items():
            folder = self.root / ".claude" / "monitors" / monitor_id
            folder.mkdir()
            (folder / "MONITOR.md").write_text(f"---\n{frontmatter}---\nReact to the change.\n")
        self.cli("init", "--enable-only")
        self.socket = self.cli("daemon", "status", "--format", "json", parse=True)["socketPath"]
        self.db = self._db_path()
        self.process: subprocess.Popen[bytes] | None = None

    def cli(self, *args: str, parse: bool = False) -> Any:
        done = subprocess.run(
            [sys.executable, "-m", "agentmonitors", *args],
            cwd=self.root,
            env=self.env,
            capture_output=True,
            check=True,
        )
        if parse:
            return json.loads(done.stdout)
        return done.stdout.decode()

    def open_session(self, host_session_id: str) -> str:
        """Start a session through the real ``session start`` hook; our session id."""
        payload = {
            "session_id": host_session_id,
            "hook_event_name": "SessionStart",
            "cwd": str(self.root),
        }
        subprocess.run(
            [sys.executable, "-m", "agentmonitors", "session", "start"],
            input=json.dumps(payload).encode(),
            cwd=self.root,
            env=self.env,
            capture_output=True,
            check=True,
        )
        sessions = self.cli("session", "list", "--format", "json", parse=True)
        return str(next(s["id"] for s in sessions if s["hostSessionId"] == host_session_id))

    def _db_path(self) -> str:
        code = (
            "import sys; from agentmonitors.paths import resolve_db_path;"
            " print(resolve_db_path(sys.argv[1]))"
        )
        done = subprocess.run(
            [sys.executable, "-c", code, str(self.root)],
            env=self.env,
            capture_output=True,
            check=True,
            text=True,
        )
        return done.stdout.strip()

    def start(self, *extra: str) -> None:
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "agentmonitors",
                "daemon",
                "run",
                "--workspace",
                str(self.root),
                "--reap-after-ms",
                "0",
                *extra,
            ],
            cwd=self.root,
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 20
        while not self.count("observation_history"):
            if time.monotonic() > deadline:
                raise RuntimeError("daemon did not finish its first tick")
            time.sleep(0.05)

    def count(self, table: str) -> int:
        if not os.path.exists(self.db):
            return 0
        conn = sqlite3.connect(self.db)
        try:
            return int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
        except sqlite3.OperationalError:
            return 0
        finally:
            conn.close()

    def rss_kib(self) -> int:
        assert self.process is not None
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise RuntimeError("no VmRSS")

    def close(self) -> None:
        if self.process is not None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(10)
        import shutil

        shutil.rmtree(self.base, ignore_errors=True)


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]
