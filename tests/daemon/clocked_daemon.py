"""Run the real daemon in its own process with a clock the test sets through a file.

``python clocked_daemon.py [--offset] CLOCK_FILE WORKSPACE [MONITORS_DIR]``: the daemon
serves the workspace on its usual socket and database exactly as ``daemon run`` does,
except that "now" is the number of epoch milliseconds in CLOCK_FILE, so a test can step
across cron minutes and poll intervals and then ask for a tick, instead of sleeping.

With ``--offset`` the file holds an offset instead: "now" is the real clock plus it, so
real time runs on (the daemon ticks on its own, every second at most) and a test jumps
the wall clock by rewriting the offset, as a user setting the clock would.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

from agentmonitors.daemon.app import Daemon, DaemonOptions
from agentmonitors.paths import resolve_db_path, resolve_socket_path
from agentmonitors.sources.registry import load_registry


class FileClock:
    def __init__(self, path: Path) -> None:
        self.path = path

    def now_ms(self) -> int:
        return int(self.path.read_text().strip())


class OffsetClock:
    def __init__(self, path: Path) -> None:
        self.path = path

    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000 + int(self.path.read_text().strip())


def main(argv: list[str]) -> int:
    offset = argv[:1] == ["--offset"]
    if offset:
        argv = argv[1:]
    clock_file, workspace = Path(argv[0]), argv[1]
    monitors_dir = argv[2] if len(argv) > 2 else None
    options = DaemonOptions(
        workspace=workspace,
        monitors_dir=monitors_dir,
        socket_path=resolve_socket_path(workspace),
        db_path=resolve_db_path(workspace),
        # The test drives every tick through `daemon.tick`; on a running clock the
        # daemon also ticks on its own, as often as a due monitor would make it.
        poll_ms=1_000 if offset else 3_600_000,
        reap_after_ms=0,
    )

    def out(line: str) -> None:
        print(line, flush=True)

    clock = OffsetClock(clock_file) if offset else FileClock(clock_file)
    daemon = Daemon(options, load_registry(), clock=clock, out=out)
    return asyncio.run(daemon.run())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
